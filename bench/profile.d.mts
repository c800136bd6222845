/** Types of bench/profile.mjs, for the tests. */
interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}
export interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
export interface RankedFunction {
  function: string;
  ms_per_call: number;
  share: number;
}
export interface StageProfile {
  calls: number;
  busy_ms_per_call: number;
  heaviest: RankedFunction[];
  heaviest_total: RankedFunction[];
}
export function heaviest(
  profile: { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] },
  calls: number,
  name: (frame: CallFrame) => { name: string; where: string },
  top?: number,
): StageProfile;
