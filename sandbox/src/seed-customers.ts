import type { Customer } from "./model";
import { evalCustomers } from "./seed-eval";

/**
 * Seed customers. Full PII on purpose (names, emails, phones, street addresses from several
 * countries) so the proxy's masking has something realistic to mask; `risk_score` is the internal
 * field it must strip.
 */

/** Messages live in their own table (seed-messages.ts); the customer row is everything else. */
export interface SeedCustomer extends Omit<Customer, "recent_messages"> {
  tenant: string;
}

export const SEED_CUSTOMERS: readonly SeedCustomer[] = [
  customer("acme", "C100", "Maria Gonzalez", "maria.gonzalez@example.com", "+14155550142", "gold", {
    line1: "742 Valencia St Apt 3",
    city: "San Francisco",
    postal_code: "94110",
    country: "US",
  }),
  customer("acme", "C101", "James O'Connor", "james.oconnor@example.net", "+16175550199", "standard", {
    line1: "18 Beacon St",
    city: "Boston",
    postal_code: "02108",
    country: "US",
  }),
  customer("acme", "C102", "Priya Raman", "priya.raman@example.org", "+12065550123", "platinum", {
    line1: "1201 3rd Ave Suite 400",
    city: "Seattle",
    postal_code: "98101",
    country: "US",
  }),
  customer("acme", "C103", "Daniel Kim", "dkim@example.com", "+13125550187", "standard", {
    line1: "55 W Wacker Dr",
    city: "Chicago",
    postal_code: "60601",
    country: "US",
  }),
  customer("acme", "C104", "Sophie Martin", "sophie.martin@example.fr", "+33142685300", "gold", {
    line1: "12 Rue de Rivoli",
    city: "Paris",
    postal_code: "75004",
    country: "FR",
  }),
  customer("acme", "C105", "Ahmed Hassan", "ahmed.hassan@example.co.uk", "+442079460958", "standard", {
    line1: "221B Baker St",
    city: "London",
    postal_code: "NW1 6XE",
    country: "GB",
  }),
  customer("globex", "C200", "Hank Scorpio", "hank.scorpio@example.com", "+15035550111", "platinum", {
    line1: "1 Globex Way",
    city: "Portland",
    postal_code: "97201",
    country: "US",
  }),
  customer("globex", "C201", "Emily Chen", "emily.chen@example.com", "+14085550176", "gold", {
    line1: "3400 Stevens Creek Blvd",
    city: "San Jose",
    postal_code: "95117",
    country: "US",
  }),
  customer("globex", "C202", "Lucas Silva", "lucas.silva@example.com.br", "+5511955550123", "standard", {
    line1: "Av. Paulista 1578",
    city: "São Paulo",
    postal_code: "01310-200",
    country: "BR",
  }),
  customer("globex", "C203", "Olivia Brown", "olivia.brown@example.com", "+13035550164", "standard", {
    line1: "1600 Glenarm Pl",
    city: "Denver",
    postal_code: "80202",
    country: "US",
  }),
  customer("globex", "C204", "Kenji Watanabe", "kenji.watanabe@example.jp", "+81355550100", "gold", {
    line1: "2-11-3 Meguro",
    city: "Tokyo",
    postal_code: "153-0063",
    country: "JP",
  }),
  customer("globex", "C205", "Fatima Zahra", "fatima.zahra@example.com", "+12125550133", "standard", {
    line1: "350 5th Ave",
    city: "New York",
    postal_code: "10118",
    country: "US",
  }),
  ...[0, 1, 2, 3, 4, 5].map((index) =>
    customer(
      "initech",
      `C30${index}`,
      `Initech Buyer ${index + 1}`,
      `buyer${index + 1}@initech.example`,
      `+1512555010${index}`,
      "standard",
      {
        line1: `${4120 + index} Freidrich Ln`,
        city: "Austin",
        postal_code: "78744",
        country: "US",
      },
    ),
  ),
  // umbrella, the rate-limit tenant, has one customer, so a write of its runs can act.
  customer("umbrella", "C401", "Umbrella Buyer", "buyer@umbrella.example", "+12025550101", "standard", {
    line1: "1 Raccoon Way",
    city: "Denver",
    postal_code: "80202",
    country: "US",
  }),
  ...[0, 1, 2, 3, 4, 5, 6, 7, 8, 9].map((index) =>
    customer(
      "hooli",
      `C50${index}`,
      `Hooli Buyer ${index + 1}`,
      `buyer${index + 1}@hooli.example`,
      `+1650555020${index}`,
      "standard",
      {
        line1: `${1600 + index} Amphitheatre Pkwy`,
        city: "Mountain View",
        postal_code: "94043",
        country: "US",
      },
    ),
  ),
  // The evaluation's own customers (C110+, C210+ and their lanes: seed-eval.ts).
  ...evalCustomers(),
];

function customer(
  tenant: string,
  customer_id: string,
  name: string,
  email: string,
  phone: string,
  tier: Customer["tier"],
  address: Customer["address"],
): SeedCustomer {
  // Deterministic but varied, so tests can rely on exact values after every reset.
  const n = Number(customer_id.slice(1));
  const day = String((n % 27) + 1).padStart(2, "0");
  return {
    tenant,
    customer_id,
    name,
    email,
    phone,
    tier,
    address,
    created_at: `2024-0${(n % 9) + 1}-${day}T10:15:00.000Z`,
    updated_at: `2026-02-${day}T08:30:00.000Z`,
    risk_score: ((n * 37 + 13) % 97) / 100,
  };
}
