// The dashboard page of graph's TestDashboardClientsInBrowser, bundled with esbuild beside the
// client set-ups of docs/graphql.md (apollo.js and urql.js, taken from the document as they
// are). window.config holds the API's URL, a key and the document's Dashboard and TypedEvents
// queries, and a write: a key that may write and a company to adjust between a client's first
// dashboard and its refetch, as a polling dashboard sees the figures change. The outcome lands
// in window.results, and window.done is set at the end.
import { gql } from "@apollo/client";
import { meros } from "meros/browser";
import { dashboardClient as apolloClient } from "./apollo.js";
import { dashboardClient as urqlClient } from "./urql.js";

const { api, key, dashboard, events, writeKey, company } = window.config;

// adjust changes the company's balance, and with it the figures a refetch brings.
async function adjust() {
  const res = await fetch(api + "/v1/companies/" + company + "/adjustments", {
    method: "POST",
    headers: { Authorization: "Bearer " + writeKey, "Content-Type": "application/json" },
    body: JSON.stringify({ amount: "10.00", note: "between two polls" }),
  });
  if (res.status !== 201) throw new Error("adjustment: " + res.status + " " + (await res.text()));
}
const results = (window.results = {});

// figures are what the dashboard shows of each company, by name.
function figures(data) {
  const out = {};
  for (const { node } of data.companies.edges) {
    out[node.name] = {
      status: node.status,
      creditLimit: node.creditLimit.amount,
      outstanding: node.outstanding.amount,
      availableCredit: node.availableCredit.amount,
      hold: node.hold ? node.hold.kind : null,
      ledger: node.ledger ? node.ledger.edges.length : -1,
    };
  }
  return out;
}

// emission summarises one result a client delivered: how many companies, and how many of them
// with their ledger.
function emission(data, state) {
  const edges = (data && data.companies && data.companies.edges) || [];
  return { state, companies: edges.length, ledgers: edges.filter((e) => e.node.ledger).length };
}

function show(client, data) {
  const table = document.createElement("table");
  table.id = client;
  for (const [name, f] of Object.entries(figures(data))) {
    const row = table.insertRow();
    for (const v of [name, f.status, f.availableCredit, f.outstanding]) row.insertCell().textContent = v;
  }
  document.body.append(table);
}

// Apollo Client: the dashboard, watched as its parts come, then the events. It returns the
// refetch that follows the write, which reads what the cache then holds for the dashboard.
async function withApollo() {
  const client = apolloClient(api + "/graphql", key);
  const Dashboard = gql(dashboard);
  const emissions = [];
  await new Promise((resolve, reject) => {
    const sub = client.watchQuery({ query: Dashboard }).subscribe({
      next(r) {
        emissions.push(emission(r.data, r.dataState));
        if (r.dataState === "complete") {
          sub.unsubscribe();
          resolve();
        }
      },
      error: reject,
    });
  });
  const ev = await client.query({ query: gql(events), variables: { lastEvent: null } });
  return async () => {
    await client.query({ query: Dashboard, fetchPolicy: "network-only" });
    const cached = client.readQuery({ query: Dashboard });
    show("apollo", cached);
    return { emissions, events: ev.data.events.edges.length, figures: figures(cached) };
  };
}

// urql with Graphcache: the same.
async function withUrql() {
  const client = urqlClient(api + "/graphql", key);
  const emissions = [];
  await new Promise((resolve, reject) => {
    // The dashboard stays subscribed, as a screen does: an unsubscription aborts the
    // request, which urql may still be reading to its closing boundary.
    client.query(dashboard, {}).subscribe((r) => {
      if (r.error) {
        reject(r.error);
        return;
      }
      emissions.push(emission(r.data, r.hasNext ? "streaming" : "complete"));
      if (!r.hasNext && !r.stale) resolve();
    });
  });
  const ev = await client.query(events, { lastEvent: null }).toPromise();
  if (ev.error) throw ev.error;
  return async () => {
    const again = await client.query(dashboard, {}, { requestPolicy: "network-only" }).toPromise();
    if (again.error) throw again.error;
    const cached = client.readQuery(dashboard, {});
    show("urql", cached.data);
    return { emissions, events: ev.data.events.edges.length, figures: figures(cached.data) };
  };
}

// meros, the multipart parser urql's and Relay's users reach for: the parts as they come.
async function withMeros() {
  const res = await fetch(api + "/graphql", {
    method: "POST",
    headers: {
      Authorization: "Bearer " + key,
      "Content-Type": "application/json",
      Accept: "multipart/mixed;deferSpec=20220824, application/json",
    },
    body: JSON.stringify({ query: dashboard }),
  });
  const parts = await meros(res);
  if (!parts[Symbol.asyncIterator]) return { contentType: res.headers.get("Content-Type"), parts: [] };
  const out = [];
  for await (const part of parts) {
    const b = part.body;
    out.push({
      json: part.json,
      hasNext: b.hasNext,
      companies: b.data ? b.data.companies.edges.length : 0,
      ledgersInData: b.data ? b.data.companies.edges.filter((e) => e.node.ledger).length : 0,
      incremental: (b.incremental || []).map((i) => ({ path: i.path, ledger: !!(i.data && i.data.ledger) })),
    });
  }
  return { contentType: res.headers.get("Content-Type"), parts: out };
}

async function run(name, f) {
  try {
    return await f();
  } catch (e) {
    results[name] = { error: String((e && e.stack) || e) };
  }
}

(async () => {
  // The clients run one after another, so that each one's requests and console are its own;
  // then the write, then each client's refetch.
  const refetch = { apollo: await run("apollo", withApollo), urql: await run("urql", withUrql) };
  await run("write", adjust);
  for (const [name, f] of Object.entries(refetch)) {
    if (f) {
      const r = await run(name, f);
      if (r) results[name] = r;
    }
  }
  const m = await run("meros", withMeros);
  if (m) results.meros = m;
  window.done = true;
})();
