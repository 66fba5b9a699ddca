// proxy-addr 2 (express's own dependency for req.ip) ships no types: the two functions used.
declare module 'proxy-addr' {
  type Trust = (address: string, hop: number) => boolean;
  function proxyaddr(req: import('node:http').IncomingMessage, trust: Trust): string;
  namespace proxyaddr {
    function compile(value: string | string[]): Trust;
  }
  export default proxyaddr;
}
