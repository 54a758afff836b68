import { redirect } from "@sveltejs/kit";
import type { PageServerLoad } from "./$types";

/** An organization's page is `/{org}`, as the Hugging Face Hub has it. */
export const load: PageServerLoad = ({ params }) => redirect(308, `/${encodeURIComponent(params.org)}`);
