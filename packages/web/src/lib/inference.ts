import type { CatalogModel } from "@hub/api";

type Task = CatalogModel["providers"][number]["task"];

/** A code sample for one client; the token is always the `HUB_TOKEN` placeholder, never a real one. */
export interface Snippet {
  label: string;
  language: string;
  text: string;
}

/** The task a model is called for: chat when any provider chats, else what its first provider does. */
export function mainTask(model: CatalogModel): Task {
  return model.providers.some((p) => p.task === "chat") ? "chat" : (model.providers[0]?.task ?? "chat");
}

/**
 * Copyable calls of a model through the Router with the official `openai` clients and curl
 * (https://platform.openai.com/docs/api-reference), pointed at the Router's public URL.
 */
export function snippets(routerUrl: string, model: string, task: Task): Snippet[] {
  const baseUrl = `${routerUrl}/v1`;
  const call = {
    chat: {
      path: "chat/completions",
      py: `completion = client.chat.completions.create(\n    model="${model}",\n    messages=[{"role": "user", "content": "Hello!"}],\n)\nprint(completion.choices[0].message.content)`,
      js: `const completion = await client.chat.completions.create({\n  model: "${model}",\n  messages: [{ role: "user", content: "Hello!" }],\n});\nconsole.log(completion.choices[0].message.content);`,
      body: `{"model": "${model}", "messages": [{"role": "user", "content": "Hello!"}]}`,
    },
    responses: {
      path: "responses",
      py: `response = client.responses.create(model="${model}", input="Hello!")\nprint(response.output_text)`,
      js: `const response = await client.responses.create({ model: "${model}", input: "Hello!" });\nconsole.log(response.output_text);`,
      body: `{"model": "${model}", "input": "Hello!"}`,
    },
    embeddings: {
      path: "embeddings",
      py: `embedding = client.embeddings.create(model="${model}", input="Hello!")\nprint(embedding.data[0].embedding[:4])`,
      js: `const embedding = await client.embeddings.create({ model: "${model}", input: "Hello!" });\nconsole.log(embedding.data[0].embedding.slice(0, 4));`,
      body: `{"model": "${model}", "input": "Hello!"}`,
    },
  }[task];
  return [
    {
      label: "Python",
      language: "python",
      text: `import os\nfrom openai import OpenAI\n\nclient = OpenAI(base_url="${baseUrl}", api_key=os.environ["HUB_TOKEN"])\n${call.py}`,
    },
    {
      label: "JavaScript",
      language: "javascript",
      text: `import OpenAI from "openai";\n\nconst client = new OpenAI({ baseURL: "${baseUrl}", apiKey: process.env.HUB_TOKEN });\n${call.js}`,
    },
    {
      label: "curl",
      language: "shell",
      text: `curl ${baseUrl}/${call.path} \\\n  -H "Authorization: Bearer $HUB_TOKEN" \\\n  -H "Content-Type: application/json" \\\n  -d '${call.body}'`,
    },
  ];
}

/** USD per million tokens, as prices are listed. */
export function perMillion(usd: number): string {
  return usd === 0 ? "free" : `$${usd.toLocaleString("en-US", { maximumFractionDigits: 4 })}`;
}
