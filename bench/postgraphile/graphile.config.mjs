// PostGraphile as creditbench runs it: the amber preset over the harness's schema, production
// settings, nothing watching the database. The harness sets the environment variables.
import { PostGraphileAmberPreset } from "postgraphile/presets/amber";
import { makePgService } from "postgraphile/adaptors/pg";

/** @type {GraphileConfig.Preset} */
const preset = {
  extends: [PostGraphileAmberPreset],
  pgServices: [
    makePgService({
      connectionString: process.env.DATABASE_URL,
      schemas: [process.env.CREDITBENCH_SCHEMA],
      // No LISTEN connection: nothing subscribes or watches.
      pubsub: false,
      // Ten connections kept open for the whole run (pg closes idle ones after 10 s by
      // default), named so the harness finds their backends in pg_stat_activity.
      poolConfig: {
        max: 10,
        idleTimeoutMillis: 0,
        application_name: process.env.CREDITBENCH_APPLICATION_NAME,
      },
    }),
  ],
  grafserv: { watch: false, graphiql: false },
  grafast: { explain: false },
};

export default preset;
