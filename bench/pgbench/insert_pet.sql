\set n random(1, 2000000000)
INSERT INTO pets_pet (name, category_id, status, created_at, updated_at) VALUES ('pgbench-' || :n, 1, 'available', now(), now()) RETURNING id;
