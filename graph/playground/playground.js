// Starts GraphiQL against creditd's /graphql. Every asset comes from this server: the page
// works with no internet access. The API key goes in the Headers tab; it is never saved in
// the browser (shouldPersistHeaders is off), so closing the tab forgets it.
(function () {
  "use strict";

  var starterQuery = [
    "# Welcome to creditd's GraphQL playground.",
    "#",
    "# 1. In the Headers tab below, put in your API key.",
    "# 2. Press the run button (or Ctrl-Enter).",
    "#",
    "# The docs (top left) describe every type and field.",
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

  var root = document.getElementById("graphiql");
  var fetcher = GraphiQL.createFetcher({ url: root.getAttribute("data-endpoint") });
  var playground = React.createElement(GraphiQL, {
    fetcher: fetcher,
    defaultQuery: starterQuery,
    defaultHeaders: JSON.stringify({ Authorization: "Bearer <your API key>" }, null, 2),
    defaultEditorToolsVisibility: "headers",
    isHeadersEditorEnabled: true,
    shouldPersistHeaders: false
  });
  ReactDOM.createRoot(root).render(playground);
})();
