/** How many calls of one run may wait for decisions at once; more answer at once, as without a wait. */
const MAX_WAITERS = 64;

/**
 * Calls of one run waiting for an approval's state to change (`Prefer: wait`), in memory: the run's
 * ledger is the one place every decision, expiry and execution of its approvals commits, so it
 * wakes them after each commit that changed an approval. A waiter that was never woken (the
 * instance restarted, the wait ran out) answers with what it had, which is always a true answer.
 */
export class ApprovalWaiters {
  readonly #waiting = new Map<string, Set<(decided: boolean) => void>>();
  #count = 0;

  /** Resolves true when the approval changed, false when `ms` passed first (or too many wait). */
  wait(approvalId: string, ms: number): Promise<boolean> {
    if (ms <= 0 || this.#count >= MAX_WAITERS) return Promise.resolve(false);
    return new Promise((resolve) => {
      const waiting = this.#waiting.get(approvalId) ?? new Set();
      this.#waiting.set(approvalId, waiting);
      this.#count++;
      const done = (decided: boolean) => {
        clearTimeout(timer);
        if (!waiting.delete(done)) return;
        this.#count--;
        if (waiting.size === 0) this.#waiting.delete(approvalId);
        resolve(decided);
      };
      const timer = setTimeout(() => done(false), ms);
      waiting.add(done);
    });
  }

  wake(approvalId: string): void {
    for (const done of [...(this.#waiting.get(approvalId) ?? [])]) done(true);
  }
}
