// An MCP server with an App, built on @modelcontextprotocol/ext-apps and
// @modelcontextprotocol/server as their documentation shows (installed
// pinned into .cache/npm by scripts/deps.sh): the tool show-chart has the
// App ui://charts/chart.html, and refresh-chart is for the App alone. The
// App's view uses ext-apps' App class (its bundle with dependencies,
// inlined: the App's CSP allows no other origin). It sends its result's
// points to the page, then calls refresh-chart, as a real App does when a
// person clicks. Run: MCPI_NPM_DIR=.cache/npm node testdata/apps-server.mjs
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { join } from "node:path";

const npm = process.env.MCPI_NPM_DIR || join(import.meta.dirname, "..", ".cache", "npm");
const require = createRequire(join(npm, "package.json"));
const load = (name) => import(pathToFileURL(require.resolve(name)).href);
const { McpServer } = await load("@modelcontextprotocol/server");
const { StdioServerTransport } = await load("@modelcontextprotocol/server/stdio");
const { registerAppTool, registerAppResource, RESOURCE_MIME_TYPE } = await load("@modelcontextprotocol/ext-apps/server");
const { z } = await load("zod");

// ext-apps' App with its dependencies, as one inline module: its export
// list becomes a global the view's script reads.
const bundle = readFileSync(require.resolve("@modelcontextprotocol/ext-apps/app-with-deps"), "utf8");
const exp = bundle.match(/export\s*\{([^}]*)\}\s*;?\s*$/);
const names = Object.fromEntries(exp[1].split(",").map((s) => s.trim().split(/\s+as\s+/)).map(([local, name]) => [name, local]));
const inlined = bundle.slice(0, exp.index) + `\nwindow.extApps = { App: ${names.App} };\n`;

const view = `<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Chart</title></head>
<body><h1 id="title">Chart</h1><pre id="out">waiting</pre>
<script type="module">${inlined.replaceAll("</script", "<\\/script")}</script>
<script type="module">
const app = new window.extApps.App({ name: "chart-view", version: "1.0.0" });
app.ontoolresult = async (result) => {
  document.getElementById("out").textContent = "points: " + JSON.stringify(result.structuredContent);
  const r = await app.callServerTool({ name: "refresh-chart", arguments: { series: "b" } });
  document.getElementById("title").textContent = r.content[0].text;
};
await app.connect();
</script></body></html>`;

const server = new McpServer({ name: "apps-chart", version: "1.0.0" });
const uri = "ui://charts/chart.html";
registerAppResource(server, "Chart view", uri, { description: "A chart" }, async () => ({
  contents: [{ uri, mimeType: RESOURCE_MIME_TYPE, text: view, _meta: { ui: { csp: { connectDomains: [], resourceDomains: [] }, prefersBorder: true } } }],
}));
registerAppTool(server, "show-chart", {
  description: "Show a chart of a series",
  inputSchema: z.object({ series: z.string() }),
  annotations: { readOnlyHint: true },
  _meta: { ui: { resourceUri: uri } },
}, async ({ series }) => ({
  content: [{ type: "text", text: `chart of ${series}` }],
  structuredContent: { series, points: [1, 2, 3] },
}));
registerAppTool(server, "refresh-chart", {
  description: "Refresh the chart (for the App)",
  inputSchema: z.object({ series: z.string() }),
  annotations: { readOnlyHint: true },
  _meta: { ui: { resourceUri: uri, visibility: ["app"] } },
}, async ({ series }) => ({ content: [{ type: "text", text: `refreshed ${series}` }] }));

await server.connect(new StdioServerTransport());
