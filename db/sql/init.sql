-- `pointwork db init`: the tables Pointwork uses, with LiteLLM's names, columns, keys and
-- indexes as litellm-proxy-extras 0.4.110's migrations leave them (read off a database they
-- built, `pg_dump --schema-only`). Idempotent: every statement skips what exists. Foreign keys
-- to LiteLLM's tables that Pointwork does not create are left out; LiteLLM's own migrations,
-- run later on the same database, add them.
CREATE TABLE IF NOT EXISTS public."LiteLLM_BudgetTable" (
    budget_id text NOT NULL,
    max_budget double precision,
    soft_budget double precision,
    max_parallel_requests integer,
    tpm_limit bigint,
    rpm_limit bigint,
    model_max_budget jsonb,
    budget_duration text,
    budget_reset_at timestamp(3) without time zone,
    created_at timestamp(3) without time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    created_by text NOT NULL,
    updated_at timestamp(3) without time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    updated_by text NOT NULL,
    allowed_models text[] DEFAULT ARRAY[]::text[],
    tpd_limit bigint,
    temp_budget_increase double precision,
    temp_budget_expiry timestamp(3) without time zone
);
CREATE TABLE IF NOT EXISTS public."LiteLLM_CredentialsTable" (
    credential_id text NOT NULL,
    credential_name text NOT NULL,
    credential_values jsonb NOT NULL,
    credential_info jsonb,
    created_at timestamp(3) without time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    created_by text NOT NULL,
    updated_at timestamp(3) without time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    updated_by text NOT NULL,
    display_name text
);
CREATE TABLE IF NOT EXISTS public."LiteLLM_ProxyModelTable" (
    model_id text NOT NULL,
    model_name text NOT NULL,
    litellm_params jsonb NOT NULL,
    model_info jsonb,
    created_at timestamp(3) without time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    created_by text NOT NULL,
    updated_at timestamp(3) without time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    updated_by text NOT NULL,
    blocked boolean DEFAULT false NOT NULL
);
CREATE TABLE IF NOT EXISTS public."LiteLLM_SpendLogs" (
    request_id text NOT NULL,
    call_type text NOT NULL,
    api_key text DEFAULT ''::text NOT NULL,
    spend double precision DEFAULT 0.0 NOT NULL,
    total_tokens integer DEFAULT 0 NOT NULL,
    prompt_tokens integer DEFAULT 0 NOT NULL,
    completion_tokens integer DEFAULT 0 NOT NULL,
    "startTime" timestamp(3) without time zone NOT NULL,
    "endTime" timestamp(3) without time zone NOT NULL,
    "completionStartTime" timestamp(3) without time zone,
    model text DEFAULT ''::text NOT NULL,
    model_id text DEFAULT ''::text,
    model_group text DEFAULT ''::text,
    custom_llm_provider text DEFAULT ''::text,
    api_base text DEFAULT ''::text,
    "user" text DEFAULT ''::text,
    metadata jsonb DEFAULT '{}'::jsonb,
    cache_hit text DEFAULT ''::text,
    cache_key text DEFAULT ''::text,
    request_tags jsonb DEFAULT '[]'::jsonb,
    team_id text,
    end_user text,
    requester_ip_address text,
    messages jsonb DEFAULT '{}'::jsonb,
    response jsonb DEFAULT '{}'::jsonb,
    proxy_server_request jsonb DEFAULT '{}'::jsonb,
    session_id text,
    status text,
    mcp_namespaced_tool_name text,
    agent_id text,
    request_duration_ms integer,
    created_at timestamp(3) without time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    updated_at timestamp(3) without time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    litellm_call_id text,
    billing_agent_id text,
    organization_id text
);
CREATE TABLE IF NOT EXISTS public."LiteLLM_TeamTable" (
    team_id text NOT NULL,
    team_alias text,
    organization_id text,
    admins text[],
    members text[],
    members_with_roles jsonb DEFAULT '{}'::jsonb NOT NULL,
    metadata jsonb DEFAULT '{}'::jsonb NOT NULL,
    max_budget double precision,
    spend double precision DEFAULT 0.0 NOT NULL,
    models text[],
    max_parallel_requests integer,
    tpm_limit bigint,
    rpm_limit bigint,
    budget_duration text,
    budget_reset_at timestamp(3) without time zone,
    blocked boolean DEFAULT false NOT NULL,
    created_at timestamp(3) without time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    updated_at timestamp(3) without time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    model_spend jsonb DEFAULT '{}'::jsonb NOT NULL,
    model_max_budget jsonb DEFAULT '{}'::jsonb NOT NULL,
    model_id integer,
    team_member_permissions text[] DEFAULT ARRAY[]::text[],
    object_permission_id text,
    router_settings jsonb DEFAULT '{}'::jsonb,
    policies text[] DEFAULT ARRAY[]::text[],
    allow_team_guardrail_config boolean DEFAULT false NOT NULL,
    soft_budget double precision,
    access_group_ids text[] DEFAULT ARRAY[]::text[],
    budget_limits jsonb,
    default_team_member_models text[] DEFAULT ARRAY[]::text[],
    tpd_limit bigint
);
CREATE TABLE IF NOT EXISTS public."LiteLLM_UserTable" (
    user_id text NOT NULL,
    user_alias text,
    team_id text,
    sso_user_id text,
    organization_id text,
    password text,
    teams text[] DEFAULT ARRAY[]::text[],
    user_role text,
    max_budget double precision,
    spend double precision DEFAULT 0.0 NOT NULL,
    user_email text,
    models text[],
    metadata jsonb DEFAULT '{}'::jsonb NOT NULL,
    max_parallel_requests integer,
    tpm_limit bigint,
    rpm_limit bigint,
    budget_duration text,
    budget_reset_at timestamp(3) without time zone,
    allowed_cache_controls text[] DEFAULT ARRAY[]::text[],
    model_spend jsonb DEFAULT '{}'::jsonb NOT NULL,
    model_max_budget jsonb DEFAULT '{}'::jsonb NOT NULL,
    created_at timestamp(3) without time zone DEFAULT CURRENT_TIMESTAMP,
    updated_at timestamp(3) without time zone DEFAULT CURRENT_TIMESTAMP,
    object_permission_id text,
    policies text[] DEFAULT ARRAY[]::text[],
    password_reset_required boolean,
    last_breach_check_at timestamp(3) without time zone
);
CREATE TABLE IF NOT EXISTS public."LiteLLM_VerificationToken" (
    token text NOT NULL,
    key_name text,
    key_alias text,
    soft_budget_cooldown boolean DEFAULT false NOT NULL,
    spend double precision DEFAULT 0.0 NOT NULL,
    expires timestamp(3) without time zone,
    models text[],
    aliases jsonb DEFAULT '{}'::jsonb NOT NULL,
    config jsonb DEFAULT '{}'::jsonb NOT NULL,
    user_id text,
    team_id text,
    permissions jsonb DEFAULT '{}'::jsonb NOT NULL,
    max_parallel_requests integer,
    metadata jsonb DEFAULT '{}'::jsonb NOT NULL,
    blocked boolean,
    tpm_limit bigint,
    rpm_limit bigint,
    max_budget double precision,
    budget_duration text,
    budget_reset_at timestamp(3) without time zone,
    allowed_cache_controls text[] DEFAULT ARRAY[]::text[],
    model_spend jsonb DEFAULT '{}'::jsonb NOT NULL,
    model_max_budget jsonb DEFAULT '{}'::jsonb NOT NULL,
    budget_id text,
    organization_id text,
    created_at timestamp(3) without time zone DEFAULT CURRENT_TIMESTAMP,
    created_by text,
    updated_at timestamp(3) without time zone DEFAULT CURRENT_TIMESTAMP,
    updated_by text,
    allowed_routes text[] DEFAULT ARRAY[]::text[],
    object_permission_id text,
    auto_rotate boolean DEFAULT false,
    key_rotation_at timestamp(3) without time zone,
    last_rotation_at timestamp(3) without time zone,
    rotation_count integer DEFAULT 0,
    rotation_interval text,
    project_id text,
    router_settings jsonb DEFAULT '{}'::jsonb,
    policies text[] DEFAULT ARRAY[]::text[],
    access_group_ids text[] DEFAULT ARRAY[]::text[],
    last_active timestamp(3) without time zone,
    agent_id text,
    budget_limits jsonb,
    budget_fallbacks jsonb DEFAULT '{}'::jsonb NOT NULL,
    key_type text,
    settings_updated_at timestamp(3) without time zone,
    tpd_limit bigint,
    total_spend double precision DEFAULT 0.0 NOT NULL
);
CREATE TABLE IF NOT EXISTS public."LiteLLM_ObjectPermissionTable" (
    object_permission_id text NOT NULL,
    mcp_servers text[] DEFAULT ARRAY[]::text[],
    vector_stores text[] DEFAULT ARRAY[]::text[],
    mcp_access_groups text[] DEFAULT ARRAY[]::text[],
    mcp_tool_permissions jsonb,
    agents text[] DEFAULT ARRAY[]::text[],
    agent_access_groups text[] DEFAULT ARRAY[]::text[],
    blocked_tools text[] DEFAULT ARRAY[]::text[],
    models text[] DEFAULT ARRAY[]::text[],
    mcp_toolsets text[] DEFAULT ARRAY[]::text[],
    search_tools text[] DEFAULT ARRAY[]::text[],
    mcp_tool_search_enabled boolean,
    skills text[] DEFAULT ARRAY[]::text[]
);
DO $$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conname = 'LiteLLM_ObjectPermissionTable_pkey') THEN
    ALTER TABLE ONLY public."LiteLLM_ObjectPermissionTable"     ADD CONSTRAINT "LiteLLM_ObjectPermissionTable_pkey" PRIMARY KEY (object_permission_id);
  END IF;
END $$;
DO $$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conname = 'LiteLLM_BudgetTable_pkey') THEN
    ALTER TABLE ONLY public."LiteLLM_BudgetTable"     ADD CONSTRAINT "LiteLLM_BudgetTable_pkey" PRIMARY KEY (budget_id);
  END IF;
END $$;
DO $$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conname = 'LiteLLM_CredentialsTable_pkey') THEN
    ALTER TABLE ONLY public."LiteLLM_CredentialsTable"     ADD CONSTRAINT "LiteLLM_CredentialsTable_pkey" PRIMARY KEY (credential_id);
  END IF;
END $$;
DO $$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conname = 'LiteLLM_ProxyModelTable_pkey') THEN
    ALTER TABLE ONLY public."LiteLLM_ProxyModelTable"     ADD CONSTRAINT "LiteLLM_ProxyModelTable_pkey" PRIMARY KEY (model_id);
  END IF;
END $$;
DO $$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conname = 'LiteLLM_SpendLogs_pkey') THEN
    ALTER TABLE ONLY public."LiteLLM_SpendLogs"     ADD CONSTRAINT "LiteLLM_SpendLogs_pkey" PRIMARY KEY (request_id);
  END IF;
END $$;
DO $$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conname = 'LiteLLM_TeamTable_pkey') THEN
    ALTER TABLE ONLY public."LiteLLM_TeamTable"     ADD CONSTRAINT "LiteLLM_TeamTable_pkey" PRIMARY KEY (team_id);
  END IF;
END $$;
DO $$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conname = 'LiteLLM_UserTable_pkey') THEN
    ALTER TABLE ONLY public."LiteLLM_UserTable"     ADD CONSTRAINT "LiteLLM_UserTable_pkey" PRIMARY KEY (user_id);
  END IF;
END $$;
DO $$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conname = 'LiteLLM_VerificationToken_pkey') THEN
    ALTER TABLE ONLY public."LiteLLM_VerificationToken"     ADD CONSTRAINT "LiteLLM_VerificationToken_pkey" PRIMARY KEY (token);
  END IF;
END $$;
CREATE UNIQUE INDEX IF NOT EXISTS "LiteLLM_CredentialsTable_credential_name_key" ON public."LiteLLM_CredentialsTable" USING btree (credential_name);
CREATE INDEX IF NOT EXISTS "LiteLLM_SpendLogs_end_user_idx" ON public."LiteLLM_SpendLogs" USING btree (end_user);
CREATE INDEX IF NOT EXISTS "LiteLLM_SpendLogs_session_id_idx" ON public."LiteLLM_SpendLogs" USING btree (session_id);
CREATE INDEX IF NOT EXISTS "LiteLLM_SpendLogs_startTime_idx" ON public."LiteLLM_SpendLogs" USING btree ("startTime");
CREATE INDEX IF NOT EXISTS "LiteLLM_SpendLogs_startTime_request_id_idx" ON public."LiteLLM_SpendLogs" USING btree ("startTime", request_id);
CREATE INDEX IF NOT EXISTS "LiteLLM_TeamTable_created_at_idx" ON public."LiteLLM_TeamTable" USING btree (created_at);
CREATE UNIQUE INDEX IF NOT EXISTS "LiteLLM_TeamTable_model_id_key" ON public."LiteLLM_TeamTable" USING btree (model_id);
CREATE INDEX IF NOT EXISTS "LiteLLM_TeamTable_organization_id_idx" ON public."LiteLLM_TeamTable" USING btree (organization_id);
CREATE INDEX IF NOT EXISTS "LiteLLM_TeamTable_team_alias_idx" ON public."LiteLLM_TeamTable" USING btree (team_alias);
CREATE UNIQUE INDEX IF NOT EXISTS "LiteLLM_UserTable_sso_user_id_key" ON public."LiteLLM_UserTable" USING btree (sso_user_id);
CREATE INDEX IF NOT EXISTS "LiteLLM_UserTable_user_email_lower_idx" ON public."LiteLLM_UserTable" USING btree (lower(user_email));
CREATE INDEX IF NOT EXISTS "LiteLLM_VerificationToken_budget_reset_at_expires_idx" ON public."LiteLLM_VerificationToken" USING btree (budget_reset_at, expires);
CREATE INDEX IF NOT EXISTS "LiteLLM_VerificationToken_team_id_idx" ON public."LiteLLM_VerificationToken" USING btree (team_id);
CREATE INDEX IF NOT EXISTS "LiteLLM_VerificationToken_user_id_team_id_idx" ON public."LiteLLM_VerificationToken" USING btree (user_id, team_id);
DO $$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conname = 'LiteLLM_VerificationToken_budget_id_fkey') THEN
    ALTER TABLE ONLY public."LiteLLM_VerificationToken"     ADD CONSTRAINT "LiteLLM_VerificationToken_budget_id_fkey" FOREIGN KEY (budget_id) REFERENCES public."LiteLLM_BudgetTable"(budget_id) ON UPDATE CASCADE ON DELETE SET NULL;
  END IF;
END $$;
