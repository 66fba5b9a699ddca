// A V8 .cpuprofile (node --cpu-prof) read for the summaries of bench/tools (profile-summary.ts,
// bots-profile.ts): its nodes by id, each node's parent, and what is on a sample's stack.
import { readFileSync } from 'node:fs';

export interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
export interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** A profile read from `file`, with its nodes by id, their parents, and a stack test. */
export function readProfile(file: string) {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  /** Whether a function named `name` is on the stack of node `id`. */
  const onStack = (id: number, name: string): boolean => {
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at))
      if (byId.get(at)!.callFrame.functionName === name) return true;
    return false;
  };
  return { profile, byId, parent, onStack };
}
