/**
 * A count with its noun in the right number: `plural(1, "call")` is "1 call", `plural(5, "call")`
 * "5 calls", `plural(2, "reply", "replies")` "2 replies". Every count the console writes in words
 * goes through here, so none reads "1 answers".
 */
export function plural(count: number, one: string, many = `${one}s`): string {
  return `${count} ${count === 1 ? one : many}`;
}
