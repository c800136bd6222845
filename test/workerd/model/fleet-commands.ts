import { nameRun } from "./across-runs";
import { type ModelCommand, makeCall, type RealWorld } from "./commands";
import {
  type Door,
  type FLEET_RUNS,
  type LaterRunName,
  newRunModel,
  type ReferenceModel,
  tenantOfRun,
} from "./reference";
import { openModelRun } from "./system";

/**
 * The commands that make a sequence about one tenant's runs together: another hooli run opens, and a
 * run repeats a refund another run made or asked for, as it was or with another reason or amount
 * (the same order either way: the same effect, which must wait for a human who sees the first).
 */

export type FleetRunName = (typeof FLEET_RUNS)[number];

/** Another run of hooli opens, with the limits the sequence gives its later runs. */
export class OpenRunCommand implements ModelCommand {
  constructor(readonly name: LaterRunName) {}

  check(model: Readonly<ReferenceModel>): boolean {
    return model.runs[this.name] === undefined;
  }

  async run(model: ReferenceModel, world: RealWorld): Promise<void> {
    world.stats.commands++;
    const handle = await openModelRun(tenantOfRun(this.name), model.fleetLimits);
    model.runs[this.name] = newRunModel(this.name, handle, model.fleetLimits);
    nameRun(handle.id, this.name, model.sequence);
  }

  toString(): string {
    return `${this.name}: another hooli run opens`;
  }
}

export type RefundVariant = "as it was" | "with another reason" | "with another amount";

const OTHER_REASON: Record<string, string> = { user_cancel: "price_error", price_error: "user_cancel" };
const OTHER_AMOUNT: Record<number, number> = { 400: 1000, 1000: 400, 1500: 1000 };

/** The refund another run made (or asked for) most recently, on the same order, in this run. */
export class CrossRunRefundCommand implements ModelCommand {
  constructor(
    readonly from: FleetRunName,
    readonly to: FleetRunName,
    readonly variant: RefundVariant,
    readonly door: Door,
  ) {}

  #lastRefund(model: Readonly<ReferenceModel>): Record<string, unknown> | null {
    const keys = [...(model.runs[this.from]?.keys.values() ?? [])];
    return keys.filter((key) => key.tool === "issue_refund").at(-1)?.args ?? null;
  }

  check(model: Readonly<ReferenceModel>): boolean {
    return this.from !== this.to && model.runs[this.to] !== undefined && this.#lastRefund(model) !== null;
  }

  async run(model: ReferenceModel, world: RealWorld): Promise<void> {
    world.stats.commands++;
    const last = this.#lastRefund(model);
    if (!last) throw new Error("check() admits a repeat only after a refund of the other run");
    const args = { ...last };
    if (this.variant === "with another reason")
      args.reason = OTHER_REASON[String(args.reason)] ?? "price_error";
    if (this.variant === "with another amount")
      args.amount_cents = OTHER_AMOUNT[Number(args.amount_cents)] ?? 400;
    const call = {
      run: this.to,
      tool: "issue_refund" as const,
      args,
      intent: null,
      door: this.door,
      fault: null,
    };
    await makeCall(model, world, call, [this.door]);
  }

  toString(): string {
    return `${this.to}: call via ${this.door} the refund ${this.from} made last, ${this.variant}`;
  }
}

/** One refund of a spree: which of the sequence's orders, how much, and why. */
export interface SpreeRefund {
  order: number;
  amount: number;
  reason: string;
}

/**
 * A hooli run refunds several orders in a row, each small enough to go ahead without a human and
 * each a call of its own: the shape that reaches the per-run cap (4000) and an order's daily cap
 * (2500) within one sequence.
 */
export class RefundSpreeCommand implements ModelCommand {
  constructor(
    readonly runName: FleetRunName,
    readonly refunds: readonly SpreeRefund[],
  ) {}

  check(model: Readonly<ReferenceModel>): boolean {
    return model.runs[this.runName] !== undefined;
  }

  async run(model: ReferenceModel, world: RealWorld): Promise<void> {
    world.stats.commands++;
    for (const { order, amount, reason } of this.refunds) {
      const args = { order_id: model.fleetOrders[order], amount_cents: amount, reason };
      const call = {
        run: this.runName,
        tool: "issue_refund" as const,
        args,
        intent: null,
        door: "rest" as const,
        fault: null,
      };
      await makeCall(model, world, call, ["rest"]);
    }
  }

  toString(): string {
    const refunds = this.refunds.map(({ order, amount, reason }) => `H#${order} ${amount} ${reason}`);
    return `${this.runName}: refunds in a row ${refunds.join(", ")}`;
  }
}
