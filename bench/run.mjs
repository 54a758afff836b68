// Runs every benchmark; each prints its own figures and ratio against a reference measured in the same run.
import { benchCliMemory } from "./cli-memory.mjs";
import { benchGit } from "./git.mjs";
import { benchLfs } from "./lfs.mjs";
import { benchRouter } from "./router.mjs";
import { benchScale } from "./scale.mjs";
import { benchSearch } from "./search.mjs";
import { benchSnapshot } from "./snapshot.mjs";
import { benchWebhooks } from "./webhooks.mjs";
import { benchWeb } from "./web.mjs";
import { benchWhoami } from "./whoami.mjs";
import { benchXet } from "./xet.mjs";

await benchWhoami();
await benchRouter();
await benchGit();
await benchLfs();
await benchSnapshot();
await benchWebhooks();
await benchCliMemory();
await benchWeb();
await benchXet();
await benchSearch();
await benchScale();
