-- Written by hand, checked against ent/schema by TestMigrationsMatchEntSchema: the company
-- orderings and the search of contract §6 (2026-11-27). Each company gets its normalised name
-- and its sort keys (credit/orderkeys.go), with an index per ordering. The keys of the existing
-- companies are computed by the domain's own functions, in Go, in this migration's transaction
-- (the step named at the end), so that they equal what the service writes.
ALTER TABLE "companies" ADD COLUMN "name_key" character varying NOT NULL DEFAULT '', ADD COLUMN "outstanding_key" character varying NOT NULL DEFAULT '', ADD COLUMN "credit_limit_key" character varying NOT NULL DEFAULT '', ADD COLUMN "available_key" character varying NOT NULL DEFAULT '', ADD COLUMN "utilization_key" character varying NOT NULL DEFAULT '';
CREATE INDEX "company_store_id_name_key_id" ON "companies" ("store_id", "name_key", "id");
CREATE INDEX "company_store_id_outstanding_key_id" ON "companies" ("store_id", "outstanding_key", "id");
CREATE INDEX "company_store_id_credit_limit_key_id" ON "companies" ("store_id", "credit_limit_key", "id");
CREATE INDEX "company_store_id_available_key_id" ON "companies" ("store_id", "available_key", "id");
CREATE INDEX "company_store_id_utilization_key_id" ON "companies" ("store_id", "utilization_key", "id");
-- The search (name_key LIKE '%…%') from a trigram index where pg_trgm can be had: the
-- extension as installed, else created in the schema public (shared by every schema of the
-- database, so that dropping one schema never drops the index of another), else in the
-- current schema. Without it the search reads the store's names from the index above.
DO $$
DECLARE
  ns text;
BEGIN
  SELECT n.nspname INTO ns FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm';
  IF ns IS NULL THEN
    BEGIN
      IF EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = 'public') THEN
        CREATE EXTENSION pg_trgm SCHEMA public;
        ns := 'public';
      ELSE
        CREATE EXTENSION pg_trgm;
        ns := current_schema();
      END IF;
    EXCEPTION WHEN OTHERS THEN
      RAISE NOTICE 'pg_trgm is not available (%): the company search reads the names index', SQLERRM;
      ns := NULL;
    END;
  END IF;
  IF ns IS NOT NULL THEN
    EXECUTE format('CREATE INDEX company_name_key_trgm ON companies USING gin (name_key %I.gin_trgm_ops)', ns);
  END IF;
END
$$;
-- step: company-order-keys
