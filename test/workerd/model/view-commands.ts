import { ledgerStubOf, restartDurableObject } from "../helpers";
import type { ModelCommand, RealWorld } from "./commands";
import {
  directoryRefusesWrites,
  refuseDirectoryWrites,
  restoreDirectory,
  settleAndCheckViews,
} from "./derived-views";
import { openRunsOf, type ReferenceModel, type TenantName } from "./reference";
import { checkWorld } from "./world-checks";

/**
 * The commands that pull a tenant's directory (the operators' lists) apart from its runs' ledgers:
 * it goes down, so every ledger commit meanwhile (an approval asked for, decided, expired, a run
 * ended) is owed to it; a ledger may restart before it comes back. When it is back, the run's alarm
 * rings and the lists must equal the ledger (rule 8).
 */

/** The tenant's directory refuses writes from now on, until it is restored or every object restarts. */
export class DirectoryDownCommand implements ModelCommand {
  constructor(readonly tenant: TenantName) {}

  check(): boolean {
    return !directoryRefusesWrites(this.tenant);
  }

  async run(_model: ReferenceModel, world: RealWorld): Promise<void> {
    world.stats.commands++;
    await refuseDirectoryWrites(this.tenant);
  }

  toString(): string {
    return `${this.tenant}: the operators' directory goes down (refuses writes)`;
  }
}

/**
 * The directory comes back (a fresh instance), the run's ledger alarm rings, and its lists are held
 * to the ledger. With `restartFirst`, the ledger also restarts while the directory is still down:
 * what it owes must outlive the instance that committed it.
 */
export class DirectoryBackCommand implements ModelCommand {
  constructor(
    readonly tenant: TenantName,
    readonly restartFirst: boolean,
  ) {}

  check(): boolean {
    return directoryRefusesWrites(this.tenant);
  }

  async run(model: ReferenceModel, world: RealWorld): Promise<void> {
    world.stats.commands++;
    const runs = openRunsOf(model).filter((run) => run.tenant === this.tenant);
    if (this.restartFirst) {
      for (const run of runs) await restartDurableObject(ledgerStubOf(run.handle));
    }
    await restoreDirectory(this.tenant);
    await settleAndCheckViews(runs);
    await checkWorld(runs, []);
  }

  toString(): string {
    const restart = this.restartFirst ? "the runs' ledgers restart, then " : "";
    return `${this.tenant}: ${restart}the directory is back and the runs' alarms ring`;
  }
}
