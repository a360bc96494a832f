// The live dashboard of cmd/creditd's TestLiveDashboardsInBrowser, bundled with esbuild beside
// docs/graphql.md's live.js, apollo.js and urql.js, taken from the document as they are, and
// run with the libraries' default retry settings. window.config holds the instances' URLs, a
// key, the event to start after, and the document's CreditOverview query and Live
// subscription. Three clients, each with its own connection, show the companies' figures
// (CreditOverview, from their cache, which the events' companies update) and every event the
// subscription delivers: Apollo Client over graphql-ws, urql over graphql-ws, urql over
// graphql-sse. Each live client takes the instances in turn at every connect, as the document
// shows. What each shows lands in window.live[client].
import { gql } from "@apollo/client";
import { dashboardClient as apolloClient } from "./apollo.js";
import { dashboardClient as urqlClient } from "./urql.js";
import { overSSE, overWebSocket } from "./live.js";

const { instances, key, start, overview, live } = window.config;
const state = (window.live = {});

// inTurn returns a url function that takes the instances in turn, recording each connect.
function inTurn(name, scheme) {
  let turn = 0;
  return () => {
    const url = instances[turn++ % instances.length].replace(/^http/, scheme) + "/graphql";
    state[name].connects.push(url);
    return url;
  };
}

// client makes the state and the part of the page of one client.
function client(name) {
  const section = document.createElement("section");
  section.id = name;
  section.innerHTML = `<h2>${name}</h2><table class="figures"></table><p>events: <span class="count">0</span></p><p class="error"></p>`;
  document.body.append(section);
  state[name] = { events: [], connects: [], errors: [], figures: {} };
  return {
    figures(data) {
      const table = section.querySelector(".figures");
      table.replaceChildren();
      for (const { node } of data.companies.edges) {
        const row = table.insertRow();
        row.dataset.company = node.id;
        for (const v of [node.name, node.outstanding.amount, node.availableCredit.amount]) row.insertCell().textContent = v;
        state[name].figures[node.id] = { outstanding: node.outstanding.amount, availableCredit: node.availableCredit.amount };
      }
    },
    event(ev) {
      state[name].events.push(ev.id);
      section.querySelector(".count").textContent = String(state[name].events.length);
    },
    error(e) {
      const m = errorText(e);
      state[name].errors.push(m);
      section.querySelector(".error").textContent = m;
    },
  };
}

// errorText is an error's code (extensions.code of its first GraphQL error) and message.
function errorText(e) {
  const first = (e && (e.graphQLErrors || e.errors)) || (Array.isArray(e) ? e : []);
  const code = first[0] && first[0].extensions && first[0].extensions.code;
  return (code ? code + ": " : "") + String((e && (e.message || e.reason || e.code)) || e);
}

// Apollo Client over graphql-ws: the overview watched, the subscription's events shown.
function withApollo() {
  const ui = client("apollo");
  const c = apolloClient(instances[0] + "/graphql", key, overWebSocket(inTurn("apollo", "ws"), key));
  c.watchQuery({ query: gql(overview), variables: { after: null } }).subscribe({
    next: (r) => r.data && r.dataState === "complete" && ui.figures(r.data),
    error: ui.error,
  });
  c.subscribe({ query: gql(live), variables: { lastEvent: start } }).subscribe({
    next: (r) => (r.error ? ui.error(r.error) : ui.event(r.data.events)),
    error: ui.error,
  });
}

// urql over either transport: result.error first, then data.
const urqlClients = {};
function withUrql(name, transport) {
  const ui = client(name);
  const c = (urqlClients[name] = urqlClient(instances[0] + "/graphql", key, transport));
  c.query(overview, { after: null }).subscribe((r) => (r.error ? ui.error(r.error) : r.data && ui.figures(r.data)));
  c.subscription(live, { lastEvent: start }).subscribe((r) => {
    if (r.error) {
      ui.error(r.error);
      // What urql hands with the error: Graphcache may add the data it cached.
      state[name].dataWithError = !!(r.data && r.data.events);
      return;
    }
    ui.event(r.data.events);
  });
}

withApollo();
withUrql("urql-ws", overWebSocket(inTurn("urql-ws", "ws"), key));
withUrql("urql-sse", overSSE(inTurn("urql-sse", "http"), key));
// refetch runs the overview again from the network on each urql client, as a page does after
// its key was revoked: what urql hands back, error and data.
window.refetch = async () => {
  const out = {};
  for (const [name, c] of Object.entries(urqlClients)) {
    const r = await c.query(overview, { after: null }, { requestPolicy: "network-only" }).toPromise();
    out[name] = { error: r.error ? errorText(r.error) : "", data: !!(r.data && r.data.companies) };
  }
  return out;
};
window.started = true;
