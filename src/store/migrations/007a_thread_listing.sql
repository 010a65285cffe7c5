-- GET /threads walks an organization's threads newest first by (created_at, id).
CREATE INDEX threads_newest_first ON threads (organization_id, created_at DESC, id DESC);
