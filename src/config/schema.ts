import { DURATION_PATTERN } from '../util/duration.js';
import { ENV_NAME_PATTERN } from './env-refs.js';

const duration = (dflt: string) => ({ type: 'string', pattern: DURATION_PATTERN, default: dflt });

const bucket = (limit: number, window: string) => ({
  type: 'object',
  additionalProperties: false,
  default: {},
  properties: {
    limit: { type: 'integer', minimum: 1, default: limit },
    window: { type: 'string', pattern: DURATION_PATTERN, default: window, description: 'e.g. 1m, 1h' },
  },
});

/** JSON Schema of config.yaml, with every default (API.md "config.yaml keys"). */
export const configSchema = {
  $id: 'pinbot-config',
  type: 'object',
  additionalProperties: false,
  properties: {
    server: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        host: { type: 'string', default: '127.0.0.1' },
        port: { type: 'integer', minimum: 0, maximum: 65535, default: 3000 },
        headers_timeout: {
          ...duration('15s'),
          description: "longest wait for a request's headers (slow clients are answered 408)",
        },
        request_timeout: { ...duration('30s'), description: 'longest wait for a whole request, headers and body' },
        keep_alive_timeout: { ...duration('5s'), description: 'how long an idle keep-alive connection stays open' },
        max_connections: {
          type: 'integer',
          minimum: 1,
          maximum: 1_000_000,
          default: 1000,
          description: 'open connections beyond this are closed at once',
        },
        trust_proxy: {
          anyOf: [{ type: 'boolean' }, { type: 'integer', minimum: 0 }, { type: 'string', minLength: 1 }],
          default: false,
          description:
            'express "trust proxy": behind a reverse proxy, which X-Forwarded-For hops give the client address',
        },
      },
    },
    rate_limits: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        enabled: { type: 'boolean', default: true },
        general: bucket(100, '1m'),
        messages: bucket(30, '1m'),
        contacts: bucket(20, '1h'),
        intros: bucket(10, '1h'),
        users: {
          type: 'object',
          default: {},
          description:
            'limits of their own for some users, by PIN or display name (e.g. the ' +
            'users bots act as): { "FAQ Bot": { general: 1000, messages: 300 } }, per ' +
            'the same windows',
          additionalProperties: {
            type: 'object',
            additionalProperties: false,
            properties: {
              general: { type: 'integer', minimum: 1 },
              messages: { type: 'integer', minimum: 1 },
              contacts: { type: 'integer', minimum: 1 },
              intros: { type: 'integer', minimum: 1 },
              groups: { type: 'integer', minimum: 1 },
              conditional: { type: 'integer', minimum: 1 },
            },
          },
        },
        groups: bucket(10, '1h'),
        anonymous: bucket(30, '1m'),
        conditional: {
          ...bucket(600, '1m'),
          description:
            'conditional reads answered 304 Not Modified, per user: they cost this ' +
            'bucket instead of general (If-None-Match: * costs general)',
        },
      },
    },
    wallet: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: { max_transfer: { type: 'number', exclusiveMinimum: 0, default: 1_000_000 } },
    },
    ubi: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        amount_per_day: { type: 'number', minimum: 0, default: 1 },
        schedule: { type: 'string', default: '0 0 * * *' },
      },
    },
    subscription: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: { trial_days: { type: 'integer', minimum: 0, default: 30 } },
    },
    quotas: {
      type: 'object',
      additionalProperties: false,
      default: {},
      description: 'what one user may keep in the store (docs/reliability.md "Round 4")',
      properties: {
        messages_per_conversation: {
          type: 'integer',
          minimum: 100,
          default: 10_000,
          description: 'messages kept per conversation: past it, the oldest leave the store',
        },
        groups_per_user: {
          type: 'integer',
          minimum: 1,
          default: 1000,
          description: 'group conversations one user may create',
        },
        bytes_per_user: {
          type: 'integer',
          minimum: 65_536,
          default: 10_485_760,
          description:
            'bytes (UTF-8) of the messages kept, transfer notes, introduction messages and group names of one user',
        },
      },
    },
    messaging: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        max_length: { type: 'integer', minimum: 1, default: 4000 },
        max_group_size: { type: 'integer', minimum: 3, default: 100 },
      },
    },
    bots: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        dir: { type: 'string', default: 'bots', description: 'folder of bot YAML files run by serve' },
        enabled: { type: 'boolean', default: true },
        lease_ttl: {
          type: 'string',
          pattern: DURATION_PATTERN,
          default: '15s',
          description:
            'driver postgres: a process that has not renewed its bot leases for this ' +
            'long is taken for dead and its bots move to the others (renewed every ' +
            'third of it)',
        },
        env_allow: {
          type: 'array',
          items: { type: 'string', pattern: ENV_NAME_PATTERN },
          uniqueItems: true,
          default: [],
          description:
            'environment variables bot files may read with ${env:NAME} anywhere (by ' +
            'default only PINBOT_KEY_… in key and PINBOT_SERVER… in server)',
        },
        allowed_servers: {
          type: 'array',
          items: { type: 'string', pattern: '^https?://[^/?#]+/?$' },
          uniqueItems: true,
          default: [],
          description:
            'remote servers bot files may name in server: (scheme, host and port, e.g. https://api.example.com); any other is refused, since a bot sends its key to its server',
        },
      },
    },
    plugins: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        dir: {
          type: 'string',
          default: 'plugins',
          description: 'folder of plugin modules (*.ts, *.js), loaded without a build step',
        },
        packages: {
          type: 'array',
          items: { type: 'string', minLength: 1 },
          default: [],
          description: 'npm packages to load as plugins (installed in this project)',
        },
        config: {
          type: 'object',
          default: {},
          propertyNames: { pattern: '^[a-z][a-z0-9_]*$' },
          description:
            "each plugin's settings, by plugin name, checked against the plugin's " +
            'configSchema at load (${env:VAR} allowed)',
        },
        quarantine_after: {
          type: 'integer',
          minimum: 0,
          default: 5,
          description:
            'consecutive failures after which a plugin is quarantined (0: never; failures of HTTP routes never count)',
        },
        max_body_bytes: {
          type: 'integer',
          minimum: 1,
          maximum: 104_857_600,
          default: 1_048_576,
          description:
            'largest request body a plugin HTTP route takes (bytes); a larger one is answered 413 before it is read',
        },
        state: {
          type: 'object',
          additionalProperties: false,
          default: {},
          description: 'the bound of ctx.state per plugin and bot (and of the state a plugin shares between bots)',
          properties: {
            max_keys: { type: 'integer', minimum: 1, default: 10_000, description: 'keys a plugin may keep per bot' },
            max_bytes: {
              type: 'integer',
              minimum: 1024,
              default: 16_777_216,
              description: 'bytes (JSON of keys and values) a plugin may keep per bot',
            },
          },
        },
      },
    },
    runtime: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        step_timeout: {
          type: 'string',
          pattern: DURATION_PATTERN,
          default: '10s',
          description:
            'working time an action, the conditions of a rule or a poll source may ' +
            'take before it fails with reason timeout (e.g. 10s, 500ms)',
        },
        safety_poll: {
          type: 'string',
          pattern: DURATION_PATTERN,
          default: '10m',
          description:
            'embedded bots are woken by the changes that concern them; they still poll this often, as a safety net',
        },
      },
    },
    store: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        compact_bytes: {
          type: 'integer',
          minimum: 1024,
          default: 67_108_864,
          description: 'journal size that triggers a snapshot',
        },
        driver: {
          enum: ['file', 'postgres'],
          default: 'file',
          description:
            'file: the journaled data directory (one process); postgres: PostgreSQL, ' +
            'shared by several processes (docs/scaling.md)',
        },
        url: {
          type: 'string',
          pattern: '^postgres(ql)?://',
          description:
            'the PostgreSQL database of driver postgres, e.g. ${env:DATABASE_URL} ' +
            '(postgres://user:password@host:5432/pinbot)',
        },
        schema: {
          type: 'string',
          pattern: '^[a-z_][a-z0-9_]{0,47}$',
          default: 'pinbot',
          description: 'the PostgreSQL schema holding the tables',
        },
        pool_size: {
          type: 'integer',
          minimum: 2,
          maximum: 1000,
          default: 10,
          description: 'PostgreSQL connections per process',
        },
        read_wait: {
          ...duration('5s'),
          description:
            'driver postgres: longest a read waits for the database (a commit in ' +
            'flight, a catch-up) before it is answered 503 storage_unavailable',
        },
      },
    },
    log: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        level: { enum: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], default: 'info' },
        buffer_bytes: {
          type: 'integer',
          minimum: 65_536,
          maximum: 1_073_741_824,
          default: 4_194_304,
          description: 'log lines waiting for a slow stdout beyond this are dropped and counted, never buffered',
        },
      },
    },
    console: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        enabled: {
          type: 'boolean',
          description:
            'the web console at /console: on by default only when server.host is a ' +
            'loopback address; true serves it on any address, false never',
        },
        link_ttl: {
          ...duration('10m'),
          description: 'how long a sign-in link of `pinbot console` stays usable (it is single-use)',
        },
        session_idle: {
          ...duration('30m'),
          description: 'how long a console session may go unused before it ends (sign in again with `pinbot console`)',
        },
      },
    },
    metrics: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        enabled: {
          type: 'boolean',
          description:
            'GET /metrics (Prometheus): unset, served without a token on a loopback ' +
            'address and with `token` elsewhere (off without one); false: not served, ' +
            'and requests not counted (bot, store and job counters still feed the ' +
            'console); true: the same as unset, but a start on another address ' +
            'without `token` is an error',
        },
        token: {
          type: 'string',
          minLength: 16,
          maxLength: 512,
          pattern: '^[\\x21-\\x7e]+$',
          description:
            'the bearer token a scraper sends (Authorization: Bearer …), e.g. ' +
            '${env:PINBOT_METRICS_TOKEN}: 16 to 512 visible ASCII characters; once ' +
            'set it is asked on every address',
        },
      },
    },
  },
} as const;

export interface BucketConfig {
  limit: number;
  window: string;
}

/** The validated configuration, every key filled in. */
export interface Config {
  server: {
    host: string;
    port: number;
    headers_timeout: string;
    request_timeout: string;
    keep_alive_timeout: string;
    max_connections: number;
    trust_proxy: boolean | number | string;
  };
  rate_limits: {
    enabled: boolean;
    general: BucketConfig;
    messages: BucketConfig;
    contacts: BucketConfig;
    intros: BucketConfig;
    /** Limits of their own, by PIN or display name. */
    users: Record<
      string,
      Partial<Record<'general' | 'messages' | 'contacts' | 'intros' | 'groups' | 'conditional', number>>
    >;
    groups: BucketConfig;
    anonymous: BucketConfig;
    conditional: BucketConfig;
  };
  wallet: { max_transfer: number };
  ubi: { amount_per_day: number; schedule: string };
  subscription: { trial_days: number };
  messaging: { max_length: number; max_group_size: number };
  quotas: { messages_per_conversation: number; groups_per_user: number; bytes_per_user: number };
  bots: { dir: string; enabled: boolean; lease_ttl: string; env_allow: string[]; allowed_servers: string[] };
  plugins: {
    dir: string;
    packages: string[];
    config: Record<string, unknown>;
    quarantine_after: number;
    max_body_bytes: number;
    state: { max_keys: number; max_bytes: number };
  };
  runtime: { step_timeout: string; safety_poll: string };
  store: {
    compact_bytes: number;
    driver: 'file' | 'postgres';
    url?: string;
    schema: string;
    pool_size: number;
    read_wait: string;
  };
  log: { level: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent'; buffer_bytes: number };
  /** The web console (docs/console.md); `enabled` unset: on only on a loopback address. */
  console: { enabled?: boolean; link_ttl: string; session_idle: string };
  /** GET /metrics (docs/operations.md "Monitoring"). */
  metrics: { enabled?: boolean; token?: string };
}
