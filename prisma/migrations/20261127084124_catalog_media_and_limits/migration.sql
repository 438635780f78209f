-- AlterTable
ALTER TABLE "model_endpoints" ADD COLUMN     "image" JSONB;

-- AlterTable
ALTER TABLE "models" ADD COLUMN     "video" JSONB;

-- per_request_limits becomes { prompt_tokens, completion_tokens } numbers, or null (admin-api.md,
-- the Model record). Stored values that hold both as numbers or numeric strings are converted;
-- anything else becomes null, and the migration runner logs each such model with its old value.
DO $$
DECLARE
  m record;
  numeral constant text := '^\s*[0-9]+(\.[0-9]+)?\s*$';
BEGIN
  FOR m IN SELECT id, per_request_limits AS limits FROM models WHERE per_request_limits IS NOT NULL AND per_request_limits <> 'null'::jsonb ORDER BY id LOOP
    IF jsonb_typeof(m.limits) = 'object'
      AND (SELECT count(*) FROM jsonb_object_keys(m.limits)) = 2
      AND jsonb_typeof(m.limits -> 'prompt_tokens') IN ('number', 'string')
      AND jsonb_typeof(m.limits -> 'completion_tokens') IN ('number', 'string')
      AND (m.limits ->> 'prompt_tokens') ~ numeral
      AND (m.limits ->> 'completion_tokens') ~ numeral
    THEN
      UPDATE models
         SET per_request_limits = jsonb_build_object(
               'prompt_tokens', trim(m.limits ->> 'prompt_tokens')::numeric,
               'completion_tokens', trim(m.limits ->> 'completion_tokens')::numeric)
       WHERE id = m.id;
    ELSE
      UPDATE models SET per_request_limits = NULL WHERE id = m.id;
      RAISE NOTICE 'model %: per_request_limits % is not { prompt_tokens, completion_tokens } numbers; set to null', m.id, m.limits::text;
    END IF;
  END LOOP;
  -- A JSON null stored as a value reads as SQL NULL from now on.
  UPDATE models SET per_request_limits = NULL WHERE per_request_limits = 'null'::jsonb;
END $$;
