import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { AccountBilling, PaymentInformation } from "@hub/api";
import { principalOf } from "../../../http/access.js";
import type { BillingService } from "./billing.service.js";

const tags = ["Billing"];

/** The caller's billing: plan, credit, usage and spend, and the payment method on file (settings reads). */
export function billingRoutes({ billing }: { billing: BillingService }): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      "/api/me/billing",
      {
        schema: {
          operationId: "account_billing_get",
          tags,
          summary:
            "Plan, credit balance, this month's inference usage and spend from the Router's ledger, and the monthly hard limit with what is left of it.",
          response: { 200: AccountBilling },
        },
        config: { access: { action: "settings:read" } },
      },
      async (request) => {
        const principal = principalOf(request);
        return billing.billing({ type: "user", id: principal.userId, handle: principal.handle });
      },
    );

    app.get(
      "/api/me/billing/payment-information",
      {
        schema: {
          operationId: "account_billing_payment_information_get",
          tags,
          summary:
            "The payment method on file, masked (brand, last four digits, expiry, holder, billing email and country); null when none is.",
          response: { 200: PaymentInformation },
        },
        config: { access: { action: "settings:read" } },
      },
      async (request) => billing.paymentInformation(principalOf(request).userId),
    );
  };
}
