import fc from "fast-check";
import { type CatalogChange, CatalogChangeCommand, RefundAcrossDeployCommand } from "./catalog-commands";
import {
  AgentCallCommand,
  ArmFaultCommand,
  CallAcrossRestartCommand,
  DecideCommand,
  type DecisionKind,
  EditedRefundCommand,
  EndRunCommand,
  LostAnswerResendCommand,
  type ModelCommand,
  PassDeadlineCommand,
  PollutedArgumentsCommand,
  ResendLastCallCommand,
  RestartCommand,
  type RestartTarget,
  TwoPersonRefundCommand,
} from "./commands";
import {
  CrossRunRefundCommand,
  type FleetRunName,
  OpenRunCommand,
  RefundSpreeCommand,
  type RefundVariant,
} from "./fleet-commands";
import {
  type AgentCall,
  type Door,
  FLEET_RUNS,
  type HeaderFault,
  LATER_RUNS,
  RUN_NAMES,
  type RunName,
  reorderKeys,
  TENANTS,
  type TenantName,
  TIMEOUT_MS,
  type ToolName,
  tenantOfRun,
} from "./reference";
import { DirectoryBackCommand, DirectoryDownCommand } from "./view-commands";

/**
 * The arbitraries of the model-based test: which calls an agent makes, what operators decide, which
 * faults and restarts happen, weighted so that calls and decisions dominate and slow or drastic
 * steps stay rare (a slow fault costs a real tool timeout).
 */

/**
 * A deliberately small pool, so that a sequence often repeats a call: the tenants' own orders (the
 * last one cancelled, so the upstream refuses to refund it), one customer, one summary. hooli's
 * orders are slots the sequence fills with orders of its own (`resolveCall`), so its caps start
 * from what this sequence moves.
 */
const ORDERS: Record<TenantName, readonly string[]> = {
  acme: ["A1001", "A1002", "A1005"],
  globex: ["B2002", "B2003", "B2004"],
  hooli: ["H#0", "H#1", "H#2"],
};
const CUSTOMER: Record<TenantName, string> = { acme: "C101", globex: "C201", hooli: "C501" };
/** Over acme's two_person_above (30000), so two different people must approve (rule 11). */
const ACME_TWO_PERSON_CENTS = 35000;
/**
 * globex and hooli auto-approve refunds up to 1000 cents, so 1500 is the amount that needs a human
 * there; hooli's 400 and 1000 reach its caps (2500 an order a day, 4000 a run) in a few refunds.
 */
const AMOUNTS: Record<TenantName, readonly number[]> = {
  acme: [25, ACME_TWO_PERSON_CENTS],
  globex: [25, 1500],
  hooli: [400, 1000, 1500],
};
/** Only hooli's runs give other reasons: the same order's refund for another reason is the same effect. */
const REASONS: Record<TenantName, readonly string[]> = {
  acme: ["user_cancel"],
  globex: ["user_cancel"],
  hooli: ["user_cancel", "price_error"],
};
const TICKET_SUMMARY = "Customer asked for a call back about a late order.";

const orderIndex = fc.oneof({ weight: 9, arbitrary: fc.nat(1) }, { weight: 1, arbitrary: fc.constant(2) });

type ToolChoice =
  | { tool: "lookup_order"; order: number }
  | { tool: "create_internal_ticket"; urgent: boolean }
  | { tool: "issue_refund"; order: number; amount: number; reason: number };

const toolChoice: fc.Arbitrary<ToolChoice> = fc.oneof(
  { weight: 2, arbitrary: fc.record({ tool: fc.constant("lookup_order" as const), order: orderIndex }) },
  {
    weight: 3,
    arbitrary: fc.record({
      tool: fc.constant("create_internal_ticket" as const),
      urgent: fc.oneof(
        { weight: 2, arbitrary: fc.constant(false) },
        { weight: 1, arbitrary: fc.constant(true) },
      ),
    }),
  },
  {
    weight: 5,
    arbitrary: fc.record({
      tool: fc.constant("issue_refund" as const),
      order: orderIndex,
      amount: fc.nat(2),
      reason: fc.nat(1),
    }),
  },
);

function argsOf(tenant: TenantName, choice: ToolChoice): Record<string, unknown> {
  switch (choice.tool) {
    case "lookup_order":
      return { order_id: ORDERS[tenant][choice.order] };
    case "create_internal_ticket":
      return {
        customer_id: CUSTOMER[tenant],
        priority: choice.urgent ? "urgent" : "normal",
        summary: TICKET_SUMMARY,
      };
    case "issue_refund": {
      const amounts = AMOUNTS[tenant];
      return {
        order_id: ORDERS[tenant][choice.order],
        amount_cents: amounts[choice.amount % amounts.length],
        reason: REASONS[tenant][choice.reason % REASONS[tenant].length],
      };
    }
  }
}

const tenant = fc.constantFrom(...TENANTS);
/** Any run of the sequence; rarely the one a command opens later, which may not be open yet. */
const runName: fc.Arbitrary<RunName> = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom<RunName>("acme", "globex", "hooli", "hooli#2") },
  { weight: 1, arbitrary: fc.constantFrom<RunName>(...LATER_RUNS) },
);
const fleetRun = fc.constantFrom<FleetRunName>(...FLEET_RUNS);
const door = fc.constantFrom<Door>("rest", "mcp");
const intent = fc.oneof(
  { weight: 4, arbitrary: fc.constant(null) },
  { weight: 1, arbitrary: fc.constantFrom("nonce-a", "nonce-b") },
);

type FaultChoice =
  | "none"
  | "bad_gateway"
  | "silent_failure"
  | "truncated"
  | "rate_limited"
  | "slow_success"
  | "hang";

const faultChoice = fc.oneof(
  { weight: 14, arbitrary: fc.constant<FaultChoice>("none") },
  { weight: 2, arbitrary: fc.constant<FaultChoice>("bad_gateway") },
  { weight: 1, arbitrary: fc.constant<FaultChoice>("silent_failure") },
  { weight: 1, arbitrary: fc.constant<FaultChoice>("truncated") },
  { weight: 1, arbitrary: fc.constant<FaultChoice>("rate_limited") },
  { weight: 1, arbitrary: fc.constantFrom<FaultChoice>("slow_success", "hang") },
);

/**
 * What a resend meets: mostly nothing, sometimes a 429 (answered before the application, so it says
 * nothing about an earlier attempt) or the application's answer with its body cut off (a success,
 * or the upstream's own refusal whose code only its records still hold).
 */
const resendFault: fc.Arbitrary<HeaderFault | null> = fc.oneof(
  { weight: 5, arbitrary: fc.constant(null) },
  { weight: 3, arbitrary: fc.constant<HeaderFault>({ mode: "rate_limited", retry_after_s: 0 }) },
  { weight: 1, arbitrary: fc.constant<HeaderFault>({ mode: "truncated" }) },
  { weight: 1, arbitrary: fc.constant<HeaderFault>({ mode: "bad_gateway" }) },
);

/** The fault as the endpoint can take it: reads have nothing to roll back, so no silent failure. */
function faultFor(tool: ToolName, choice: FaultChoice): HeaderFault | null {
  switch (choice) {
    case "none":
      return null;
    case "bad_gateway":
      return { mode: "bad_gateway" };
    case "silent_failure":
      return tool === "lookup_order" ? null : { mode: "silent_failure" };
    case "truncated":
      return { mode: "truncated" };
    case "rate_limited":
      // Retry-After 0: the agent is told it may call again at once, as a busy limiter would.
      return { mode: "rate_limited", retry_after_s: 0 };
    case "slow_success":
    case "hang":
      return { mode: choice, hang_ms: TIMEOUT_MS[tool] + 1_000 };
  }
}

const agentCall = fc
  .record({ run: runName, choice: toolChoice, order: fc.nat(5), intent, fault: faultChoice })
  .map(
    ({ run, choice, order, intent, fault }): AgentCall => ({
      run,
      tool: choice.tool,
      args: reorderKeys(argsOf(tenantOfRun(run), choice), order),
      intent,
      door: "rest",
      fault: faultFor(choice.tool, fault),
    }),
  );

const singleCall = fc
  .tuple(agentCall, door)
  .map(([call, via]) => new AgentCallCommand({ ...call, door: via }, [via]));

const burst = fc
  .tuple(agentCall, fc.array(door, { minLength: 2, maxLength: 3 }))
  .map(([call, doors]) => new AgentCallCommand({ ...call, fault: null }, doors));

const writeCall = agentCall.filter((call) => call.tool !== "lookup_order");

/**
 * The upstream holds a write's request while every Durable Object restarts: `hang` before it acts
 * (an aborted request never runs), `slow_success` after it acted. The hold stays below the tool's
 * timeout, so it is the restart that interrupts the request, not the proxy giving up.
 */
const heldAcrossRestart = (tool: ToolName, mode: "hang" | "slow_success"): HeaderFault => ({
  mode,
  hang_ms: Math.min(1_500, TIMEOUT_MS[tool] - 250),
});

/** Only writes reach the upstream and hold a key worth losing mid-flight. */
const callAcrossRestart = fc
  .tuple(writeCall, fc.constantFrom("hang" as const, "slow_success" as const))
  .map(
    ([call, mode]) => new CallAcrossRestartCommand({ ...call, fault: heldAcrossRestart(call.tool, mode) }),
  );

const resend = fc
  .record({ run: runName, door, keyOrder: fc.nat(5), fault: resendFault })
  .map(({ run, door, keyOrder, fault }) => new ResendLastCallCommand(run, door, keyOrder, fault));

/**
 * A write that acts while its answer is lost (the upstream answers after the tool's timeout, or a
 * restart cuts it off), resent at once into a 429 or a truncated success of its own.
 */
const lostAnswerResend = fc
  .record({
    // Writes that reach the upstream without a human: tickets, and globex's small refunds.
    call: writeCall.filter(
      (call) =>
        call.tool === "create_internal_ticket" || [25, 400, 1000].includes(Number(call.args.amount_cents)),
    ),
    lostBy: fc.constantFrom("timeout" as const, "restart" as const),
    resendDoor: door,
    keyOrder: fc.nat(5),
    resendFault: fc.oneof(
      { weight: 4, arbitrary: fc.constant<HeaderFault>({ mode: "rate_limited", retry_after_s: 0 }) },
      resendFault,
    ),
  })
  .map(({ call, lostBy, resendDoor, keyOrder, resendFault }) => {
    const fault: HeaderFault =
      lostBy === "timeout"
        ? { mode: "slow_success", hang_ms: TIMEOUT_MS[call.tool] + 1_000 }
        : heldAcrossRestart(call.tool, "slow_success");
    return new LostAnswerResendCommand({ ...call, fault }, lostBy, resendDoor, keyOrder, resendFault);
  });

const restartsAfter = fc.oneof(
  { weight: 5, arbitrary: fc.constant(false) },
  { weight: 1, arbitrary: fc.constant(true) },
);

const decision = fc
  .record({
    run: runName,
    pick: fc.nat(7),
    kind: fc.oneof(
      { weight: 4, arbitrary: fc.constant<DecisionKind>("approve") },
      { weight: 1, arbitrary: fc.constant<DecisionKind>("reject") },
      { weight: 1, arbitrary: fc.constant<DecisionKind>("two racing approves") },
      { weight: 1, arbitrary: fc.constant<DecisionKind>("approve with one person's two keys") },
      { weight: 4, arbitrary: fc.constant<DecisionKind>("approve by two operators") },
      { weight: 3, arbitrary: fc.constant<DecisionKind>("approve with edit") },
    ),
    // An operator who checked the other runs and confirms, or one who did not.
    confirms: fc.boolean(),
    restartsAfter,
  })
  .map(
    ({ run, pick, kind, confirms, restartsAfter }) =>
      new DecideCommand(run, pick, kind, confirms, restartsAfter),
  );

/** acme's agent asks for a refund of one of its orders, its arguments in one of their key orders. */
function acmeRefund(order: number, amount: number, keyOrder: number, door: AgentCall["door"]): AgentCall {
  const args = { order_id: ORDERS.acme[order], amount_cents: amount, reason: "user_cancel" };
  return {
    run: "acme",
    tool: "issue_refund",
    args: reorderKeys(args, keyOrder),
    intent: null,
    door,
    fault: null,
  };
}

/**
 * acme's refund over its two-person threshold, decided as soon as it is asked for: mostly by two
 * people, else in the ways that must not execute it (one person's two keys, a race, one approval).
 */
const twoPersonRefund = fc
  .record({
    order: orderIndex,
    keyOrder: fc.nat(5),
    door,
    kind: fc.oneof(
      { weight: 3, arbitrary: fc.constant<DecisionKind>("approve by two operators") },
      { weight: 1, arbitrary: fc.constant<DecisionKind>("approve with one person's two keys") },
      { weight: 1, arbitrary: fc.constant<DecisionKind>("two racing approves") },
      { weight: 1, arbitrary: fc.constant<DecisionKind>("approve") },
      { weight: 1, arbitrary: fc.constant<DecisionKind>("approve with edit") },
    ),
    restartsAfter,
  })
  .map(({ order, keyOrder, door, kind, restartsAfter }) => {
    const call = acmeRefund(order, ACME_TWO_PERSON_CENTS, keyOrder, door);
    return new TwoPersonRefundCommand(call, kind, restartsAfter);
  });

/**
 * acme's refund (every one waits for a human there), lowered by an operator before approving, then
 * resent by the agent as it asked it.
 */
const editedRefund = fc
  .record({
    order: orderIndex,
    amount: fc.constantFrom(...AMOUNTS.acme),
    keyOrder: fc.nat(5),
    door,
    resends: fc.integer({ min: 1, max: 3 }),
    restartsAfter,
  })
  .map(
    ({ order, amount, keyOrder, door, resends, restartsAfter }) =>
      new EditedRefundCommand(acmeRefund(order, amount, keyOrder, door), resends, restartsAfter),
  );

const armedFault = fc
  .record({
    run: runName,
    target: fc.constantFrom(
      { path: "/refunds" as const, tool: "issue_refund" as const },
      { path: "/tickets" as const, tool: "create_internal_ticket" as const },
    ),
    fault: fc.constantFrom<FaultChoice>(
      "bad_gateway",
      "silent_failure",
      "truncated",
      "rate_limited",
      "slow_success",
      "hang",
    ),
  })
  .map(
    ({ run, target, fault }) =>
      new ArmFaultCommand(run, target.path, faultFor(target.tool, fault) ?? { mode: "bad_gateway" }),
  );

const restart = fc
  .constantFrom<RestartTarget>("every Durable Object", "hooli's effect shards", ...RUN_NAMES)
  .map((target) => new RestartCommand(target));

/** A hooli run refunds its sequence's orders in a row, amounts it may move without a human. */
const refundSpree = fc
  .record({
    run: fleetRun,
    refunds: fc.uniqueArray(
      fc.record({
        order: fc.nat(1),
        amount: fc.constantFrom(1000, 999, 700, 400),
        reason: fc.constantFrom("user_cancel", "price_error"),
      }),
      { minLength: 3, maxLength: 5, selector: ({ order, amount, reason }) => `${order} ${amount} ${reason}` },
    ),
  })
  .map(({ run, refunds }) => new RefundSpreeCommand(run, refunds));

/** A hooli run repeats another's refund: the same order, as it was or with another reason or amount. */
const crossRunRefund = fc
  .record({
    from: fleetRun,
    to: fleetRun,
    variant: fc.constantFrom<RefundVariant>("as it was", "with another reason", "with another amount"),
    door,
  })
  .map(({ from, to, variant, door }) => new CrossRunRefundCommand(from, to, variant, door));

const polluted = fc
  .record({
    run: runName,
    key: fc.constantFrom("__proto__" as const, "constructor" as const, "prototype" as const),
    nested: fc.boolean(),
  })
  .map(({ run, key, nested }) => new PollutedArgumentsCommand(run, key, nested));

/**
 * A deploy changes the catalog or the tenants' table while runs are open: as often something no
 * run's call depends on as the contract of a tool they call (mostly the refund, whose approvals it voids).
 */
const catalogChange = fc
  .oneof(
    {
      weight: 1,
      arbitrary: fc.constantFrom<CatalogChange>(
        { kind: "unrelated", what: "another namespace's tool" },
        { kind: "unrelated", what: "a tool no call uses" },
        { kind: "unrelated", what: "another tenant's namespaces" },
      ),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom<CatalogChange>(
        { kind: "related", tool: "issue_refund" },
        { kind: "related", tool: "issue_refund" },
        { kind: "related", tool: "create_internal_ticket" },
      ),
    },
  )
  .map((change) => new CatalogChangeCommand(change));

/**
 * acme's refund asked for, a deploy while it waits, then approved and asked again: of an order
 * still refundable, so an approval that executes reaches the upstream's yes.
 */
const refundAcrossDeploy = fc
  .record({
    order: fc.nat(1),
    keyOrder: fc.nat(5),
    door,
    change: fc.constantFrom<CatalogChange>(
      { kind: "related", tool: "issue_refund" },
      { kind: "unrelated", what: "a tool no call uses" },
      { kind: "unrelated", what: "another tenant's namespaces" },
    ),
  })
  .map(
    ({ order, keyOrder, door, change }) =>
      new RefundAcrossDeployCommand(acmeRefund(order, AMOUNTS.acme[0] ?? 25, keyOrder, door), change),
  );

/** Every command, weighted so that calls and decisions dominate and slow or drastic steps are rare. */
export const modelCommand: fc.Arbitrary<ModelCommand> = fc.oneof(
  { weight: 10, arbitrary: singleCall },
  { weight: 5, arbitrary: resend },
  { weight: 3, arbitrary: burst },
  { weight: 6, arbitrary: decision },
  { weight: 2, arbitrary: twoPersonRefund },
  { weight: 2, arbitrary: editedRefund },
  { weight: 2, arbitrary: armedFault },
  { weight: 1, arbitrary: restart },
  { weight: 1, arbitrary: callAcrossRestart },
  { weight: 1, arbitrary: runName.map((run) => new PassDeadlineCommand(run)) },
  { weight: 1, arbitrary: runName.map((run) => new EndRunCommand(run)) },
  { weight: 2, arbitrary: fc.constantFrom(...LATER_RUNS).map((name) => new OpenRunCommand(name)) },
  { weight: 5, arbitrary: crossRunRefund },
  { weight: 2, arbitrary: refundSpree },
  { weight: 1, arbitrary: polluted },
  { weight: 3, arbitrary: lostAnswerResend },
  { weight: 1, arbitrary: catalogChange },
  { weight: 2, arbitrary: refundAcrossDeploy },
  { weight: 3, arbitrary: tenant.map((run) => new DirectoryDownCommand(run)) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(tenant, fc.boolean())
      .map(([run, restartFirst]) => new DirectoryBackCommand(run, restartFirst)),
  },
);

/** hooli's runs may make more refunds, so that one run reaches the per-run and per-order caps. */
export const fleetLimits = fc.record({
  max_calls: fc.integer({ min: 12, max: 20 }),
  max_writes: fc.integer({ min: 1, max: 2 }),
  max_destructive: fc.integer({ min: 4, max: 8 }),
});

export const limits = fc.record({
  max_calls: fc.integer({ min: 10, max: 15 }),
  max_writes: fc.integer({ min: 1, max: 2 }),
  max_destructive: fc.oneof(
    { weight: 3, arbitrary: fc.constant(1) },
    { weight: 1, arbitrary: fc.constant(2) },
  ),
});
