import type { CustomerMessage } from "./model";

/**
 * What customers wrote to support, one or two messages each, about their seeded orders. This is
 * the untrusted text of the sandbox: a model that reads a customer reads these too, so the proxy's
 * fencing of untrusted content has real text to fence (and the `injection` fault a place to hide).
 * Ids are `msg_<customer>_<n>`, numbered in the order received; timestamps are fixed so every
 * reset gives identical answers.
 */

type SeedMessage = Omit<CustomerMessage, "message_id">;

function email(received_at: string, subject: string, body: string): SeedMessage {
  return { channel: "email", subject, body, received_at };
}

function chat(received_at: string, subject: string, body: string): SeedMessage {
  return { channel: "chat", subject, body, received_at };
}

/** Oldest first per customer, as they arrived. */
const MESSAGES: Record<string, readonly SeedMessage[]> = {
  C100: [
    email(
      "2026-03-08T09:14:22.000Z",
      "Cracked ear cup on order A1001",
      "Hi, my headphones arrived with a cracked left ear cup, can I get a replacement? The box looked fine, so I think it happened before packing.",
    ),
    chat(
      "2026-04-21T16:02:47.000Z",
      "Standing desk delivery",
      "Any news on the standing desk (A1004)? I took Friday off to be home for the delivery.",
    ),
  ],
  C101: [
    email(
      "2026-04-14T07:48:05.000Z",
      "Wrong apartment number",
      "The tracking page says there is an address problem with my chair. It should be 18 Beacon St, Unit 5. Please don't send it back!",
    ),
  ],
  C102: [
    email(
      "2026-02-27T18:31:40.000Z",
      "Milk frother broken",
      "The milk frother from order A1003 was rattling when I unpacked it and won't switch on. The espresso machine itself is great.",
    ),
    email(
      "2026-03-02T10:05:12.000Z",
      "Re: Milk frother broken",
      "Thanks for the refund, it showed up on my card this morning.",
    ),
  ],
  C103: [
    chat(
      "2026-03-27T21:41:09.000Z",
      "Cancel my order",
      "I ordered the Smart Watch Fit 4 by mistake, I meant the Fit 5. Can you cancel A1005 before it ships?",
    ),
  ],
  C104: [
    email(
      "2026-04-02T12:20:33.000Z",
      "Livraison en France",
      "Bonjour, do you ship the Espresso Machine Pro X to Paris, and would I pay import duties on top?",
    ),
  ],
  C105: [
    chat(
      "2026-04-16T08:57:18.000Z",
      "Change of email",
      "Hello, I'd like my receipts sent to my work address from now on. Can you update my account?",
    ),
  ],
  C200: [
    email(
      "2026-02-10T15:22:51.000Z",
      "Returning a laptop stand",
      "We only needed one of the two aluminium stands from B2001. I've sent the spare back unused, tracking 1Z999AA10123456784.",
    ),
    email(
      "2026-03-09T11:40:06.000Z",
      "Toner for B2005",
      "The toner cartridge from B2005 prints faint streaks down the right side of every page. Is there a known issue with this batch?",
    ),
  ],
  C201: [
    chat(
      "2026-04-19T19:12:30.000Z",
      "Keyboard switches",
      "Hi! Can I still change the keyboard on B2002 to the brown-switch version, or has it already left the warehouse?",
    ),
  ],
  C202: [
    email(
      "2026-04-12T13:03:44.000Z",
      "Customs fee",
      "Olá, the courier is asking me for a customs fee before they deliver B2003. Was that not included at checkout?",
    ),
  ],
  C203: [
    email(
      "2026-03-15T11:45:02.000Z",
      "Ordered twice",
      "Sorry, I placed the lamp order twice by accident. Please cancel one of them and refund it.",
    ),
    chat(
      "2026-03-16T09:10:27.000Z",
      "Re: Ordered twice",
      "Thanks! Just to be sure: the other lamp order is still going ahead? I do want one set.",
    ),
  ],
  C204: [
    email(
      "2026-04-05T02:18:55.000Z",
      "Invoice request",
      "Could you send a VAT invoice for my last purchase? Our accounting department needs it by the end of the month.",
    ),
  ],
  C205: [
    chat(
      "2026-04-20T14:33:08.000Z",
      "Gift card balance",
      "I received a gift card for my birthday but the checkout says the code is invalid. Can you check it?",
    ),
  ],
  C300: [
    email(
      "2026-01-12T16:00:41.000Z",
      "Cover sheets",
      "Hi, did the new TPS report cover sheets ship? Bill says everyone needs to use them starting Monday.",
    ),
  ],
  C301: [
    email(
      "2026-01-13T09:27:15.000Z",
      "Wrong color",
      "Half of the cover sheets in our last case are printed in the old template. Can you replace the case?",
    ),
  ],
  C302: [
    chat(
      "2026-01-14T11:05:52.000Z",
      "Quarterly invoice",
      "When does the quarterly invoice for our bulk orders go out? Finance is closing the books.",
    ),
  ],
  C303: [
    email(
      "2026-01-15T13:44:09.000Z",
      "Stapler",
      "Not about an order: has anyone seen my red stapler? It was in the box you picked up for recycling.",
    ),
  ],
  C304: [
    email(
      "2026-01-16T08:12:37.000Z",
      "Damaged case",
      "One case arrived soaked through, the sheets are stuck together. Photos attached. Refund or replacement, either is fine.",
    ),
  ],
  C305: [
    chat(
      "2026-01-19T10:50:26.000Z",
      "Delivery dock",
      "Please deliver to loading dock B from now on, the front desk no longer accepts pallets.",
    ),
  ],
};

export interface SeedCustomerMessage extends CustomerMessage {
  customer_id: string;
}

/** Every seeded message with its id; which tenant owns it follows from the customer. */
export const SEED_MESSAGES: readonly SeedCustomerMessage[] = Object.entries(MESSAGES).flatMap(
  ([customer_id, messages]) =>
    messages.map((message, index) => ({
      message_id: messageId(customer_id, index + 1),
      customer_id,
      ...message,
    })),
);

/** `msg_c100_2` is the second message customer C100 sent. */
export function messageId(customerId: string, sequence: number): string {
  return `msg_${customerId.toLowerCase()}_${sequence}`;
}
