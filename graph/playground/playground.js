// Starts GraphiQL against creditd's /graphql. Every asset comes from this server: the page
// works with no internet access. The API key goes in the Headers tab; it is never saved in
// the browser (shouldPersistHeaders is off), so closing the tab forgets it.
//
// creditd answers introspection only with a valid key, so the docs cannot load before one is
// entered. GraphiQL introspects when it mounts and again whenever its `fetcher` or `schema`
// prop changes, and never when its headers change. So the page watches the headers editor and,
// once its Authorization header holds a well-formed key that differs from the last one, hands
// GraphiQL a new fetcher, which makes it fetch the schema again with the headers now in the
// editor. Until then the `schema` prop is null, which tells GraphiQL not to introspect at all,
// rather than failing with the placeholder and showing "Error fetching schema".
//
// A subscription runs too (the Subscription type): over a WebSocket to /graphql, with the
// key from the Headers tab in connection_init, each event appearing as it happens.
//
// A link may carry a key in its fragment (/playground#key=ck_...; see Link in playground.go).
// Browsers never send the fragment to the server, so the key stays out of its logs; the page
// moves it into the Headers tab and removes it from the address bar.
(function () {
  "use strict";

  var starterQuery = [
    "# Welcome to creditd's GraphQL playground.",
    "#",
    "# 1. In the Headers tab below, put in your API key.",
    "# 2. Press the run button (or Ctrl-Enter).",
    "#",
    "# The docs (top left) describe every type and field; they load",
    "# as soon as a key is in the Headers tab.",
    "",
    "query Dashboard {",
    "  companies(first: 10) {",
    "    edges {",
    "      node {",
    "        id",
    "        name",
    "        status",
    "        creditLimit { amount currency }",
    "        outstanding { amount currency }",
    "        availableCredit { amount currency }",
    "        hold { kind placedBy placedAt }",
    "        ledger(first: 5) {",
    "          edges { node { id kind amount { amount currency } occurredAt } }",
    "        }",
    "      }",
    "    }",
    "    pageInfo { hasNextPage endCursor }",
    "  }",
    "}",
    ""
  ].join("\n");

  var placeholderHeaders = JSON.stringify({ Authorization: "Bearer <your API key>" }, null, 2);

  // How long the headers editor must stay unchanged before its key is used: a key typed by
  // hand or edited in place fetches the schema once, not once per keystroke.
  var headersSettleMillis = 500;

  // creditd's keys are "ck_" and 36 letters or digits (credit/keys.go). Anything else, the
  // placeholder or a half-typed key included, would only be refused by the server.
  var wellFormedAuthorization = /^bearer\s+ck_[0-9A-Za-z]{36}$/i;

  // plausibleAuthorization returns the Authorization header in the headers editor's text if
  // it holds a well-formed key, and "" otherwise, including while the text is not valid JSON.
  function plausibleAuthorization(headersText) {
    var headers;
    try {
      headers = JSON.parse(headersText);
    } catch (e) {
      return "";
    }
    if (!headers || typeof headers !== "object") {
      return "";
    }
    for (var name in headers) {
      if (name.toLowerCase() === "authorization" && typeof headers[name] === "string") {
        var value = headers[name].trim();
        return wellFormedAuthorization.test(value) ? value : "";
      }
    }
    return "";
  }

  // takeKeyFromFragment returns the key in the address's fragment (#key=...), or "", and
  // removes it from the address bar and from this page's entry in the session history.
  function takeKeyFromFragment() {
    var params = new URLSearchParams(location.hash.replace(/^#/, ""));
    var key = (params.get("key") || "").trim();
    if (params.has("key")) {
      params.delete("key");
      var rest = params.toString();
      history.replaceState(history.state, "", location.pathname + location.search + (rest ? "#" + rest : ""));
    }
    return key;
  }

  // A key link opened in a tab that already shows the playground changes only the fragment,
  // which does not reload the page; reloading reads the key exactly as on a first visit.
  window.addEventListener("hashchange", function () {
    if (new URLSearchParams(location.hash.replace(/^#/, "")).has("key")) {
      location.reload();
    }
  });

  function debounce(fn, millis) {
    var timer = null;
    return function (value) {
      clearTimeout(timer);
      timer = setTimeout(function () { fn(value); }, millis);
    };
  }

  var root = document.getElementById("graphiql");
  var endpoint = root.getAttribute("data-endpoint");
  var wsEndpoint = (location.protocol === "https:" ? "wss://" : "ws://") + location.host + endpoint;
  var wsClient = null;

  // authorizedFetcher returns a new fetcher for each key; its identity is what tells GraphiQL
  // to introspect again. GraphiQL takes the headers from its editor, but the introspection it
  // starts while mounting can run before the editor exists and then carries no headers at all;
  // only that request gets the key here, so a query run without an Authorization header still
  // goes out without one.
  //
  // Subscriptions run over a WebSocket (graphql-transport-ws, with graphql-ws's client): a
  // browser cannot set headers on one, so the key goes in connection_init's payload. Each key
  // gets its own client, which connects when a subscription starts; the previous one closes.
  function authorizedFetcher(authorization) {
    if (wsClient) {
      wsClient.dispose();
      wsClient = null;
    }
    if (authorization && window.graphqlWs) {
      wsClient = graphqlWs.createClient({
        url: wsEndpoint,
        connectionParams: { Authorization: authorization },
        retryAttempts: 0
      });
    }
    var baseFetcher = GraphiQL.createFetcher({ url: endpoint, wsClient: wsClient || undefined });
    return function (params, opts) {
      if (authorization && params.operationName === "IntrospectionQuery" && !(opts && opts.headers)) {
        opts = Object.assign({}, opts, { headers: { Authorization: authorization } });
      }
      return baseFetcher(params, opts);
    };
  }

  var fragmentKey = takeKeyFromFragment();
  var initialHeaders = fragmentKey
    ? JSON.stringify({ Authorization: "Bearer " + fragmentKey }, null, 2)
    : placeholderHeaders;

  function Playground() {
    // authorization is the last well-formed Authorization header seen in the editor. It only
    // ever changes to another well-formed key: a schema once loaded stays when the header is
    // being edited or cleared.
    var state = React.useState(plausibleAuthorization(initialHeaders));
    var authorization = state[0];
    var setAuthorization = state[1];

    var fetcher = React.useMemo(function () {
      return authorizedFetcher(authorization);
    }, [authorization]);

    // Setting the same key again changes no state, so it neither re-renders nor refetches.
    var onEditHeaders = React.useMemo(function () {
      return debounce(function (headersText) {
        var next = plausibleAuthorization(headersText);
        if (next) {
          setAuthorization(next);
        }
      }, headersSettleMillis);
    }, []);

    return React.createElement(GraphiQL, {
      fetcher: fetcher,
      schema: authorization ? undefined : null,
      onEditHeaders: onEditHeaders,
      defaultQuery: starterQuery,
      defaultHeaders: initialHeaders,
      defaultEditorToolsVisibility: "headers",
      isHeadersEditorEnabled: true,
      shouldPersistHeaders: false
    });
  }

  ReactDOM.createRoot(root).render(React.createElement(Playground));
})();
