import type { AccountBilling, PaymentInformation } from "@hub/api";
import { call } from "$lib/server/api";
import type { PageServerLoad } from "./$types";

/**
 * The viewer's billing as the API exposes it (`GET /api/me/billing` and its payment information): read
 * only, since plans, credit and the card on file are the operator's to set (`hubd billing`, `hubd credit`).
 */
export const load: PageServerLoad = async ({ fetch }) => {
  const [billing, payment] = await Promise.all([
    call<AccountBilling>(fetch, "/api/me/billing"),
    call<PaymentInformation>(fetch, "/api/me/billing/payment-information"),
  ]);
  return { billing: billing.data, paymentMethod: payment.data.paymentMethod };
};
