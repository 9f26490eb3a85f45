--
-- PostgreSQL database dump
--

\restrict GoauXCf3At1fnct65LFktrrOFgDzDiYlxEzFANNFXSTolfkkF49QMgbXaJjor7T

-- Dumped from database version 15.20 (Debian 15.20-0+deb12u1)
-- Dumped by pg_dump version 15.20 (Debian 15.20-0+deb12u1)

SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

--
-- Name: tower_sessions; Type: SCHEMA; Schema: -; Owner: -
--

CREATE SCHEMA tower_sessions;


SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: _sqlx_migrations; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public._sqlx_migrations (
    version bigint NOT NULL,
    description text NOT NULL,
    installed_on timestamp with time zone DEFAULT now() NOT NULL,
    success boolean NOT NULL,
    checksum bytea NOT NULL,
    execution_time bigint NOT NULL
);


--
-- Name: api_tokens; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.api_tokens (
    id text NOT NULL,
    user_id text NOT NULL,
    name text NOT NULL,
    secret_sha256 text NOT NULL,
    created_at_ms bigint NOT NULL,
    last_used_at_ms bigint,
    expires_at_ms bigint,
    revoked_at_ms bigint,
    scope text DEFAULT 'full'::text NOT NULL,
    renew_ms bigint
);


--
-- Name: approval_requests; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.approval_requests (
    id text NOT NULL,
    tenant_id text NOT NULL,
    cluster_id text NOT NULL,
    operation text NOT NULL,
    request_json text NOT NULL,
    preview_json text NOT NULL,
    rule_id text NOT NULL,
    rule text NOT NULL,
    approver_group text,
    resume_state text NOT NULL,
    state text NOT NULL,
    requested_by text NOT NULL,
    created_at_ms bigint NOT NULL,
    expires_at_ms bigint NOT NULL,
    decided_by text,
    decided_at_ms bigint,
    reason text,
    job_id text,
    CONSTRAINT approval_requests_operation_check CHECK ((operation = ANY (ARRAY['create'::text, 'grow'::text]))),
    CONSTRAINT approval_requests_state_check CHECK ((state = ANY (ARRAY['pending'::text, 'approved'::text, 'denied'::text, 'expired'::text])))
);


--
-- Name: approval_rules; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.approval_rules (
    id text NOT NULL,
    tenant_id text NOT NULL,
    kind text NOT NULL,
    value text NOT NULL,
    approver_group text,
    window_ms bigint NOT NULL,
    created_by text,
    created_at_ms bigint NOT NULL,
    CONSTRAINT approval_rules_new_kind_check CHECK ((kind = ANY (ARRAY['template'::text, 'size-above'::text, 'provider'::text, 'cost-above'::text])))
);


--
-- Name: audit_log; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.audit_log (
    id text NOT NULL,
    tenant_id text NOT NULL,
    actor_id text,
    actor_name text NOT NULL,
    action text NOT NULL,
    target_kind text NOT NULL,
    target text NOT NULL,
    address text,
    before_json text,
    after_json text,
    at_ms bigint NOT NULL
);


--
-- Name: catalog_entities; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.catalog_entities (
    tenant_id text NOT NULL,
    kind text NOT NULL,
    name text NOT NULL,
    version bigint NOT NULL,
    body_json text,
    author_id text,
    created_at_ms bigint NOT NULL
);


--
-- Name: client_keys; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.client_keys (
    name text NOT NULL,
    public_key text NOT NULL,
    private_key text NOT NULL,
    created_at_ms bigint NOT NULL
);


--
-- Name: clusters; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.clusters (
    id text NOT NULL,
    tenant_id text NOT NULL,
    name text NOT NULL,
    template_name text NOT NULL,
    template_version bigint NOT NULL,
    template_json text NOT NULL,
    owner_id text,
    state text NOT NULL,
    layout_json text NOT NULL,
    config_json text NOT NULL,
    lease_expires_ms bigint,
    created_at_ms bigint NOT NULL,
    updated_at_ms bigint NOT NULL,
    catalog_json text DEFAULT '{}'::text NOT NULL,
    provider text DEFAULT 'local'::text NOT NULL,
    nodes_version bigint DEFAULT 0 NOT NULL,
    catalog_version bigint DEFAULT 0 NOT NULL,
    heal_note text,
    heal_note_at_ms bigint,
    healing integer,
    pinned bigint DEFAULT 0 NOT NULL,
    lease_deletes_at_ms bigint,
    lease_warned text
);


--
-- Name: cost_intervals; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.cost_intervals (
    id text NOT NULL,
    tenant_id text NOT NULL,
    cluster_id text NOT NULL,
    owner_id text,
    owner text NOT NULL,
    template text NOT NULL,
    per_hour_micros bigint NOT NULL,
    start_ms bigint NOT NULL,
    end_ms bigint
);


--
-- Name: hook_attempts; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.hook_attempts (
    id text NOT NULL,
    delivery_id text NOT NULL,
    attempt bigint NOT NULL,
    at_ms bigint NOT NULL,
    status bigint,
    error text,
    response_excerpt text NOT NULL,
    elapsed_ms bigint NOT NULL
);


--
-- Name: hook_deliveries; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.hook_deliveries (
    id text NOT NULL,
    hook_id text NOT NULL,
    tenant_id text NOT NULL,
    event text NOT NULL,
    event_id text NOT NULL,
    body text NOT NULL,
    state text NOT NULL,
    attempts bigint DEFAULT 0 NOT NULL,
    next_attempt_ms bigint NOT NULL,
    claimed_by text,
    created_at_ms bigint NOT NULL,
    delivered_at_ms bigint,
    CONSTRAINT hook_deliveries_state_check CHECK ((state = ANY (ARRAY['pending'::text, 'sending'::text, 'delivered'::text, 'failed'::text])))
);


--
-- Name: hooks; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.hooks (
    id text NOT NULL,
    tenant_id text NOT NULL,
    url text NOT NULL,
    events text NOT NULL,
    gates text NOT NULL,
    format text NOT NULL,
    secret text NOT NULL,
    timeout_ms bigint NOT NULL,
    on_failure text NOT NULL,
    created_by text,
    created_at_ms bigint NOT NULL,
    CONSTRAINT hooks_format_check CHECK ((format = ANY (ARRAY['json'::text, 'slack'::text]))),
    CONSTRAINT hooks_on_failure_check CHECK ((on_failure = ANY (ARRAY['allow'::text, 'refuse'::text])))
);


--
-- Name: job_documents; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.job_documents (
    job_id text NOT NULL,
    from_layout_json text,
    to_layout_json text,
    plan_json text NOT NULL,
    catalog_json text,
    stop_catalog_json text,
    replaced_hostnames_json text
);


--
-- Name: jobs; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.jobs (
    id text NOT NULL,
    tenant_id text NOT NULL,
    cluster_id text NOT NULL,
    operation text NOT NULL,
    state text NOT NULL,
    tasks_total bigint NOT NULL,
    tasks_succeeded bigint NOT NULL,
    created_at_ms bigint NOT NULL,
    started_at_ms bigint,
    finished_at_ms bigint,
    error text,
    cluster_state_running text,
    cluster_state_succeeded text,
    cluster_state_failed text,
    requested_by text,
    forced bigint DEFAULT 0 NOT NULL,
    CONSTRAINT jobs_state_check CHECK ((state = ANY (ARRAY['queued'::text, 'running'::text, 'failed'::text, 'succeeded'::text, 'cancelling'::text, 'cancelled'::text])))
);


--
-- Name: login_attempts; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.login_attempts (
    id text NOT NULL,
    key_hash text NOT NULL,
    at_ms bigint NOT NULL
);


--
-- Name: nodes; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.nodes (
    id text NOT NULL,
    cluster_id text NOT NULL,
    number bigint NOT NULL,
    hostname text,
    hardwaretype text NOT NULL,
    imagetype text NOT NULL,
    services_json text NOT NULL,
    provider_json text,
    state text NOT NULL,
    created_at_ms bigint NOT NULL,
    updated_at_ms bigint NOT NULL,
    version bigint DEFAULT 0 NOT NULL,
    presence text,
    presence_since_ms bigint
);


--
-- Name: plugin_resource_blobs; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.plugin_resource_blobs (
    tenant_id text NOT NULL,
    kind text NOT NULL,
    name text NOT NULL,
    version bigint NOT NULL,
    bytes bytea NOT NULL
);


--
-- Name: plugin_resources; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.plugin_resources (
    tenant_id text NOT NULL,
    kind text NOT NULL,
    name text NOT NULL,
    version bigint NOT NULL,
    sha256 text NOT NULL,
    size_bytes bigint NOT NULL,
    staged bigint DEFAULT 0 NOT NULL,
    author_id text,
    created_at_ms bigint NOT NULL,
    CONSTRAINT plugin_resources_kind_check CHECK ((kind = ANY (ARRAY['scripts'::text, 'archives'::text, 'files'::text])))
);


--
-- Name: pool_hosts; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.pool_hosts (
    id text NOT NULL,
    tenant_id text NOT NULL,
    name text NOT NULL,
    host text NOT NULL,
    port bigint NOT NULL,
    ssh_user text NOT NULL,
    host_key text NOT NULL,
    client_key text NOT NULL,
    client_public_key text NOT NULL,
    checked_out_node text,
    checked_out_at_ms bigint,
    created_at_ms bigint NOT NULL,
    updated_at_ms bigint NOT NULL,
    CONSTRAINT pool_hosts_port_check CHECK (((port >= 1) AND (port <= 65535)))
);


--
-- Name: provider_credentials; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.provider_credentials (
    tenant_id text NOT NULL,
    provider text NOT NULL,
    sealed text NOT NULL,
    field_names text NOT NULL,
    updated_by text,
    updated_at_ms bigint NOT NULL
);


--
-- Name: provider_tests; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.provider_tests (
    id text NOT NULL,
    tenant_id text NOT NULL,
    provider text NOT NULL,
    request_json text NOT NULL,
    state text NOT NULL,
    claimed_by text,
    report_json text,
    created_at_ms bigint NOT NULL,
    claim_by_ms bigint NOT NULL,
    claimed_at_ms bigint,
    finished_at_ms bigint,
    CONSTRAINT provider_tests_state_check CHECK ((state = ANY (ARRAY['queued'::text, 'running'::text, 'done'::text, 'abandoned'::text])))
);


--
-- Name: rollout_clusters; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.rollout_clusters (
    rollout_id text NOT NULL,
    cluster_id text NOT NULL,
    "position" bigint NOT NULL,
    state text NOT NULL,
    job_id text,
    note text,
    started_at_ms bigint,
    updated_at_ms bigint NOT NULL
);


--
-- Name: rollouts; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.rollouts (
    id text NOT NULL,
    tenant_id text NOT NULL,
    template text NOT NULL,
    max_parallel bigint NOT NULL,
    state text NOT NULL,
    reason text,
    created_by text NOT NULL,
    created_at_ms bigint NOT NULL,
    updated_at_ms bigint NOT NULL
);


--
-- Name: service_health; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.service_health (
    cluster_id text NOT NULL,
    node_number bigint NOT NULL,
    service text NOT NULL,
    health text NOT NULL,
    detail text,
    checked_at_ms bigint,
    next_check_ms bigint NOT NULL,
    claimed_until_ms bigint,
    down_since_ms bigint
);


--
-- Name: sso_cli_codes; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.sso_cli_codes (
    code_hash text NOT NULL,
    user_id text NOT NULL,
    challenge text NOT NULL,
    expires_at_ms bigint NOT NULL
);


--
-- Name: sso_identities; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.sso_identities (
    issuer text NOT NULL,
    subject text NOT NULL,
    user_id text NOT NULL,
    local_passwords integer DEFAULT 0 NOT NULL,
    created_at_ms bigint NOT NULL,
    signed_in_at_ms bigint NOT NULL
);


--
-- Name: task_attempts; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.task_attempts (
    id text NOT NULL,
    task_id text NOT NULL,
    attempt bigint NOT NULL,
    worker_id text NOT NULL,
    outcome text NOT NULL,
    started_at_ms bigint NOT NULL,
    finished_at_ms bigint NOT NULL,
    exit_code bigint,
    stdout text NOT NULL,
    stderr text NOT NULL,
    error text
);


--
-- Name: task_deps; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.task_deps (
    job_id text NOT NULL,
    prereq bigint NOT NULL,
    task bigint NOT NULL
);


--
-- Name: task_events; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.task_events (
    id bigint NOT NULL,
    job_id text NOT NULL,
    task_id text,
    attempt bigint,
    at_ms bigint NOT NULL,
    kind text NOT NULL,
    stream text,
    data text NOT NULL
);


--
-- Name: task_events_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.task_events_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: task_events_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.task_events_id_seq OWNED BY public.task_events.id;


--
-- Name: task_groups; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.task_groups (
    job_id text NOT NULL,
    number bigint NOT NULL,
    pending_prereqs bigint NOT NULL
);


--
-- Name: tasks; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.tasks (
    id text NOT NULL,
    job_id text NOT NULL,
    tenant_id text NOT NULL,
    cluster_id text NOT NULL,
    number bigint NOT NULL,
    node bigint NOT NULL,
    service text,
    action text NOT NULL,
    stage bigint NOT NULL,
    state text NOT NULL,
    pending_prereqs bigint NOT NULL,
    attempts bigint DEFAULT 0 NOT NULL,
    tries bigint DEFAULT 0 NOT NULL,
    max_attempts bigint NOT NULL,
    idempotent bigint NOT NULL,
    backoff_ms bigint NOT NULL,
    not_before_ms bigint NOT NULL,
    lease_owner text,
    lease_expires_ms bigint,
    created_at_ms bigint NOT NULL,
    started_at_ms bigint,
    finished_at_ms bigint,
    error text,
    CONSTRAINT tasks_state_check CHECK ((state = ANY (ARRAY['pending'::text, 'ready'::text, 'running'::text, 'succeeded'::text, 'failed'::text, 'cancelled'::text, 'skipped'::text])))
);


--
-- Name: tenant_budgets; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.tenant_budgets (
    tenant_id text NOT NULL,
    monthly_budget_micros bigint NOT NULL,
    budget_action text NOT NULL,
    updated_by text,
    updated_at_ms bigint NOT NULL,
    CONSTRAINT tenant_budgets_budget_action_check CHECK ((budget_action = ANY (ARRAY['refuse'::text, 'approval'::text])))
);


--
-- Name: tenants; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.tenants (
    id text NOT NULL,
    name text NOT NULL,
    max_clusters bigint,
    max_nodes bigint,
    created_at_ms bigint NOT NULL,
    provider_types text DEFAULT '["ssh-pool","docker","ec2","exec"]'::text NOT NULL,
    dedicated_workers bigint DEFAULT 0 NOT NULL,
    node_shell bigint DEFAULT 1 NOT NULL,
    terminal_recording bigint DEFAULT 0 NOT NULL,
    admin_keys_on_all_clusters bigint DEFAULT 0 NOT NULL
);


--
-- Name: terminal_recordings; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.terminal_recordings (
    audit_id text NOT NULL,
    tenant_id text NOT NULL,
    cast_text text NOT NULL,
    truncated bigint NOT NULL,
    recorded_at_ms bigint NOT NULL
);


--
-- Name: user_group_members; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.user_group_members (
    group_id text NOT NULL,
    user_id text NOT NULL
);


--
-- Name: user_groups; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.user_groups (
    id text NOT NULL,
    tenant_id text NOT NULL,
    name text NOT NULL,
    created_at_ms bigint NOT NULL
);


--
-- Name: user_provider_credentials; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.user_provider_credentials (
    tenant_id text NOT NULL,
    user_id text NOT NULL,
    provider text NOT NULL,
    binding text NOT NULL,
    sealed text NOT NULL,
    field_names text NOT NULL,
    updated_by text,
    updated_at_ms bigint NOT NULL
);


--
-- Name: user_ssh_keys; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.user_ssh_keys (
    id text NOT NULL,
    user_id text NOT NULL,
    public_key text NOT NULL,
    fingerprint text NOT NULL,
    created_at_ms bigint NOT NULL
);


--
-- Name: users; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.users (
    id text NOT NULL,
    tenant_id text NOT NULL,
    username text NOT NULL,
    role text NOT NULL,
    password_hash text NOT NULL,
    created_at_ms bigint NOT NULL,
    session_epoch bigint DEFAULT 0 NOT NULL,
    CONSTRAINT users_role_check CHECK ((role = ANY (ARRAY['superadmin'::text, 'tenant-admin'::text, 'user'::text])))
);


--
-- Name: session; Type: TABLE; Schema: tower_sessions; Owner: -
--

CREATE TABLE tower_sessions.session (
    id text NOT NULL,
    data bytea NOT NULL,
    expiry_date timestamp with time zone NOT NULL
);


--
-- Name: task_events id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.task_events ALTER COLUMN id SET DEFAULT nextval('public.task_events_id_seq'::regclass);


--
-- Data for Name: _sqlx_migrations; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public._sqlx_migrations VALUES (20261123000001, 'tenants users', '2026-11-30 08:04:15.168746+00', true, '\x1f83f01fa9e809ae86564fb2e6eeaa5529438aa72c5c33cb4272ee7c7d9e4cc8e68a83e38290150b55b453458bc69a28', 30427581);
INSERT INTO public._sqlx_migrations VALUES (20261123000002, 'clusters jobs tasks', '2026-11-30 08:04:15.203182+00', true, '\xb1dd6cdf9f2fd95567315fbcdf7682290b78f4eda13faa51975377afc63472f2d171b631520e5301c240774d3fff3551', 89110350);
INSERT INTO public._sqlx_migrations VALUES (20261123000003, 'catalog resources effects', '2026-11-30 08:04:15.295118+00', true, '\x7530c5c307f7778508ee2cf409bae2876e90159cf5dd90cbcab5c9e79f8fba1f3b323167748fd86ae680750efd73b6f9', 26004397);
INSERT INTO public._sqlx_migrations VALUES (20261123000005, 'access tokens audit', '2026-11-30 08:04:15.323113+00', true, '\x48b3b68e7c7c12883a8f60cdbae63b30dc759f143592258dfd356682919a0a91012ce6b44b6a08044b265446de341903', 30116341);
INSERT INTO public._sqlx_migrations VALUES (20261124000010, 'cluster nodes version', '2026-11-30 08:04:15.357265+00', true, '\xd267661f64e1a2daa01573be7f5611c5782917ef329d1c4eb32c607c14a3c0daebf5f484fe963a1e87838e8f67a2db28', 5919817);
INSERT INTO public._sqlx_migrations VALUES (20261124041000, 'pool hosts', '2026-11-30 08:04:15.363789+00', true, '\x20511e0aa45c9b74a73d858f8424d31d3a5b75f48d9c6c2956101a3f8dae46ad7a6f1040232925a3cb70b5e0dd7345cb', 27359656);
INSERT INTO public._sqlx_migrations VALUES (20261124070000, 'cluster catalog version', '2026-11-30 08:04:15.392056+00', true, '\x3ab1082296f9f342652248153b3ffc8994c1e8ef8c7d9183045b21dc41d0bba8e0649cf4aa120f9cae4409b85126c398', 3069548);
INSERT INTO public._sqlx_migrations VALUES (20261124140000, 'plugin resource blobs', '2026-11-30 08:04:15.399149+00', true, '\xbe3dffce7ed3485eee42d6278bec2cffbba09f6e1a7868029c732f6f23a2bd8d2de4fd7af7d940dc06aa727c2016e75c', 12024779);
INSERT INTO public._sqlx_migrations VALUES (20261124150000, 'forced jobs', '2026-11-30 08:04:15.414688+00', true, '\xabafeb6368174ded88382bb750b4d6f81f8fa3abe814b14f893ecfd2041dd13bf6ab833487c735d94b899379596df1f1', 4466204);
INSERT INTO public._sqlx_migrations VALUES (20261125000000, 'security', '2026-11-30 08:04:15.423209+00', true, '\x6b99502e810229bd3cdd5f9568da5ee15103c379b54c1cdbd05e161bbdff61586674d954caff667cf641e4fc16214a75', 19989743);
INSERT INTO public._sqlx_migrations VALUES (20261126000000, 'provider credentials', '2026-11-30 08:04:15.447302+00', true, '\x02323b9b5acf0b87cd0ce2c3ceded628c5c1ed975a857a91f5c57199b2bf9a523c8cc4cd055f4cb36d59e15d651325e6', 15979529);
INSERT INTO public._sqlx_migrations VALUES (20261126010000, 'tenant provider types', '2026-11-30 08:04:15.467227+00', true, '\x8acbac110702fa63c380daefbe4de8bb57ae198034b4d5a4189bef500d82ba2607bd34594d6756270df8c91c3215a731', 3937087);
INSERT INTO public._sqlx_migrations VALUES (20261126020000, 'user provider credentials', '2026-11-30 08:04:15.475185+00', true, '\xed55eb44a27f5a32701a668496a4d22246d28a9b1f2ba80b434dcddf261ceffa949a780d2ce12b02de32a97603e0d1d5', 10218239);
INSERT INTO public._sqlx_migrations VALUES (20261127000000, 'service health', '2026-11-30 08:04:15.487078+00', true, '\xd069302051171e6d0ae0334f171e013ef966fb5cf984aa04fbc389e80275ecafe959c6e5c9b37f29762c43d5ee38abae', 12069193);
INSERT INTO public._sqlx_migrations VALUES (20261127230000, 'tenant created at', '2026-11-30 08:04:15.499639+00', true, '\x58030797d7a692e43604706115b301411490e4041bab61304d8fdb683f8730ceef232db5a3ef7f335772f1d623dd59df', 4705721);
INSERT INTO public._sqlx_migrations VALUES (20261128000000, 'tenant dedicated workers', '2026-11-30 08:04:15.507095+00', true, '\x01da33381062bafccda3e25b844a9713a7dc5fc977566161a47b94d8535c973244ff53868a5f740cb2910f6bb6269cdb', 4036172);
INSERT INTO public._sqlx_migrations VALUES (20261128120000, 'client keys', '2026-11-30 08:04:15.511512+00', true, '\x0fce1a91224a4ddf478c7653bc1cad758861cb7ede1758383a6a385b8c2eb84f19dd46f2bfa458e7a2faa8edcbeefaaa', 11603763);
INSERT INTO public._sqlx_migrations VALUES (20261128200000, 'node versions', '2026-11-30 08:04:15.527124+00', true, '\xd20e5d36572de6f7be1617567b0d5f802be41b77b9defd236eac9b1f0f419461037a3506c9d54fa7fe017ed9469bfb03', 8029775);
INSERT INTO public._sqlx_migrations VALUES (20261129000000, 'job documents', '2026-11-30 08:04:15.539117+00', true, '\x27baa148695cfbf75bd965a202ca3b8fd7c97940c20f7a49b9eb69468cad612394779b0191318afe4c614f8f6f1e3803', 8003205);
INSERT INTO public._sqlx_migrations VALUES (20261129100000, 'task groups', '2026-11-30 08:04:15.551104+00', true, '\x594ab729dc1a122db7cee1722fe27ef7b2c57a529cf78d9715e71bc0ec177eebe0d2592740ca8fa7488df62140170cf1', 12024569);
INSERT INTO public._sqlx_migrations VALUES (20261130200000, 'user credentials binding', '2026-11-30 08:04:15.563525+00', true, '\xe3f1187c796fce3d4a3d2c6376a71f28afcf284a6f758a005d16cd5c55441b30823f0a3c0a9c63b5ed09193553a8e242', 22249591);
INSERT INTO public._sqlx_migrations VALUES (20261201000000, 'provider tests', '2026-11-30 08:04:15.590888+00', true, '\x898d7cc9371f092d67f4252f888866bebe700448aa33d55f0edcef651fb6ee1b909c442a81727e09ac96beb232d16bea', 13769476);
INSERT INTO public._sqlx_migrations VALUES (20261201120000, 'fair claims', '2026-11-30 08:04:15.607109+00', true, '\xe3927a6d4d6cf14328ca343a798656fe037b83e5d0c0dd42e9b8c1628667d733757fbd8f9b32fc2e411477e84dfd6f44', 16100736);
INSERT INTO public._sqlx_migrations VALUES (20261202132700, 'hooks', '2026-11-30 08:04:15.62529+00', true, '\x7c733208e7e0395c7f007918c83c399634f8e8f8c5fa4651055e627f53751e204cc1c96ec670bcbb050846accead3ca6', 41892694);
INSERT INTO public._sqlx_migrations VALUES (20261202134100, 'node shell', '2026-11-30 08:04:15.671163+00', true, '\x2a5440e1d67cc7de293a3255ea7936ccbe24585892b2511bdb255fce103a43b630c14d99f135cff2bac79f366f532f98', 3993943);
INSERT INTO public._sqlx_migrations VALUES (20261202141500, 'upgrade catalogs', '2026-11-30 08:04:15.679172+00', true, '\x6bbf7bd6bf6308ed9b2bd4f78b9adf87b6cc8de94a5de925a8b060627e75fa4ff3d5892f5d3682a9aa0a945246f6eb2f', 3974197);
INSERT INTO public._sqlx_migrations VALUES (20261203172300, 'sso', '2026-11-30 08:04:15.687145+00', true, '\x385bd2648e9287b8071818a10a45f643d76ba1261b2588e12f7ae6242276de6a55fa08fb3708e4dd9e654fcf1348f295', 24089423);
INSERT INTO public._sqlx_migrations VALUES (20261203190000, 'groups approvals', '2026-11-30 08:04:15.711843+00', true, '\x9d5fc1780164e484cbba07a6652dfdf251e7d5005d2566ff1e885c8c4b35d0dd3de0cfcde51385808a1f652097f585ed', 52442144);
INSERT INTO public._sqlx_migrations VALUES (20261204090000, 'healing', '2026-11-30 08:04:15.767139+00', true, '\x8fa1d06ae3491561c90d4308adcf134177c07c3ed6d4cec1eec15f7b1dfc6b16394e0dfd8468c86822d9dbe1c960588e', 2739370);
INSERT INTO public._sqlx_migrations VALUES (20261204120000, 'terminal recordings', '2026-11-30 08:04:15.770615+00', true, '\xd164d14d89d0e8b8adcbead6172ef73fd6f3cfcdcaee12253ed579c8f3e4408e0b751064dde9e1614caa7b4d531e580f', 16656052);
INSERT INTO public._sqlx_migrations VALUES (20261204200000, 'cluster pin', '2026-11-30 08:04:15.791154+00', true, '\x8f70db66e1da1fd2b3a4016f8e7235997ab77348b1f7fc66918f89b5041f0fbde538057746f43f0da63a46e6cd48abc8', 3995786);
INSERT INTO public._sqlx_migrations VALUES (20261204210000, 'rollouts', '2026-11-30 08:04:15.799148+00', true, '\x24b29f1d0874b7a6640d83168a56eb451ae2c7f653b6bef14e48200668beb5e4844aff9891be63d6ed5d568ed69ac82b', 28027332);
INSERT INTO public._sqlx_migrations VALUES (20261205000100, 'node presence', '2026-11-30 08:04:15.831163+00', true, '\x0eca4a89b18529d57ff6b2846531c770899a935ea5e6a854926757a6acd5d4c632ce24518cb932c8a51ef1a0d66c035d', 3981099);
INSERT INTO public._sqlx_migrations VALUES (20261205013517, 'lease grace', '2026-11-30 08:04:15.839145+00', true, '\xcc17bc745a6785d1ae3c2ba8dd25342d2c45d50d4066d6dac3ceb89966c4fe92b6b8c29e36649e9482638b28254215d1', 4034168);
INSERT INTO public._sqlx_migrations VALUES (20261205020311, 'cost', '2026-11-30 08:04:15.847138+00', true, '\x2f04186a5e8271ae0a43d0063884029b8293590ec6d8441f69f365236441312d5ab1585f2c3a1785e905f30bf1ddf6d0', 56159600);
INSERT INTO public._sqlx_migrations VALUES (20261206000000, 'user ssh keys', '2026-11-30 08:04:15.907176+00', true, '\x30f4899fbc88248f1353866e031d7c814f901288365d21c4eacf27c9a19eab4a9aeeeaa4a32a10d10a15108ef6a6ce0b', 19997918);
INSERT INTO public._sqlx_migrations VALUES (20261206100000, 'replaced hostnames', '2026-11-30 08:04:15.931151+00', true, '\x79aad5a93878d4efaca0c500ea56a84ed349839a0a3cea85a6dfc68890f3aab40d0084c737a915dbe00039867470bb39', 3990507);


--
-- Data for Name: api_tokens; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.api_tokens VALUES ('49be9e95-b250-4466-a0b7-fa72f59d8a0b', 'a20aba56-e441-42c1-810f-d303492dfe2f', 'upgrade-fixture', '2e34f6fb1aa5ef3ce9fe299f54dd805eaa2745d9f800cf8f4fdd8baec165d87f', 1796025856837, 1796025857045, NULL, NULL, 'full', NULL);
INSERT INTO public.api_tokens VALUES ('2b6df316-8c88-4bf1-8e10-b0a12db34ce1', '80f70547-092a-4866-bebe-d30a464b040a', 'upgrade-fixture', '4a05e6e94509c8fd27052f6e180953707b8ccddc27af82dd46e525554b0bf5d8', 1796025857777, 1796025858077, NULL, NULL, 'full', NULL);


--
-- Data for Name: approval_requests; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: approval_rules; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: audit_log; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.audit_log VALUES ('da54f86d-dbda-46d0-a5ce-1f622887d43f', '00000000-0000-0000-0000-000000000001', NULL, 'corral', 'catalog.demo', 'catalog', 'demo', NULL, NULL, '{"templates":["web-stack","kv-cluster","paas","kv-automated"],"entities":29}', 1796025856013);
INSERT INTO public.audit_log VALUES ('2b0a05ee-1135-4674-8d4f-0d74bd987916', '00000000-0000-0000-0000-000000000001', 'a20aba56-e441-42c1-810f-d303492dfe2f', 'admin', 'token.create', 'token', 'upgrade-fixture', '127.0.0.1', NULL, NULL, 1796025856840);
INSERT INTO public.audit_log VALUES ('ca97467a-c1a2-478c-92fe-a89a3f96d52b', 'ce7f042a-d903-43b9-9e80-3901b99db51d', 'a20aba56-e441-42c1-810f-d303492dfe2f', 'admin', 'tenant.create', 'tenant', 'acme', '127.0.0.1', NULL, NULL, 1796025857056);
INSERT INTO public.audit_log VALUES ('54704a7c-2baf-4ae6-b82a-cd208c0e3816', 'ce7f042a-d903-43b9-9e80-3901b99db51d', 'a20aba56-e441-42c1-810f-d303492dfe2f', 'admin', 'user.create', 'user', 'alice', '127.0.0.1', NULL, NULL, 1796025857383);
INSERT INTO public.audit_log VALUES ('b0fbf34e-755c-43d9-ad34-4899a67b5435', 'ce7f042a-d903-43b9-9e80-3901b99db51d', 'a20aba56-e441-42c1-810f-d303492dfe2f', 'admin', 'user.create', 'user', 'bob', '127.0.0.1', NULL, NULL, 1796025857475);
INSERT INTO public.audit_log VALUES ('e4c99000-070b-47a1-aac7-f53cac811444', 'ce7f042a-d903-43b9-9e80-3901b99db51d', '80f70547-092a-4866-bebe-d30a464b040a', 'alice', 'token.create', 'token', 'upgrade-fixture', '127.0.0.1', NULL, NULL, 1796025857779);
INSERT INTO public.audit_log VALUES ('6fc2565c-3f13-4005-9218-7aa64d651770', 'ce7f042a-d903-43b9-9e80-3901b99db51d', '80f70547-092a-4866-bebe-d30a464b040a', 'alice', 'catalog.import', 'catalog', 'bundle', '127.0.0.1', '{"providers":[],"hardwaretypes":[],"imagetypes":[],"services":[],"clustertemplates":[],"partialtemplates":[]}', '{"providers":[{"name":"local","description":"nodes as local sshd processes","providertype":"local","provisioner":{}},{"name":"inhouse","description":"the in-house cloud of the test plugin; its check passes only with the tenant''s token","providertype":"exec","provisioner":{"plugin":"corral-test-provider","expect_token_sha256":"49d298523dae390dac357989411f3dfa8fcb19abc77b5134ebc7daf973f2689c"}}],"hardwaretypes":[{"name":"small","providermap":{"local":{"flavor":"local-small"},"inhouse":{"flavor":"local-small"}}}],"imagetypes":[{"name":"debian","providermap":{"local":{"image":"host"},"inhouse":{"image":"host"}}}],"services":[{"name":"base","description":"prepares the node","dependencies":{},"provisioner":{"actions":{"install":{"type":"shell","fields":{"run":"mkdir -p \"$HOME/data\" && echo base installed on $CORRAL_HOST"}},"remove":{"type":"shell","fields":{"run":"rm -rf \"$HOME/data\""}}}}},{"name":"note","description":"writes a note naming its cluster","dependencies":{"install":{"requires":["base"]}},"provisioner":{"actions":{"configure":{"type":"shell","fields":{"run":"echo \"cluster $CORRAL_CLUSTER_NAME\" > note.txt"}},"start":{"type":"shell","fields":{"run":"cat note.txt"}}}}}],"clustertemplates":[{"name":"box","description":"nodes with a note","compatibility":{"services":["base","note"],"hardwaretypes":["small"],"imagetypes":["debian"]},"defaults":{"services":["base","note"],"provider":"local","hardwaretype":"small","imagetype":"debian","config":{}},"constraints":{"size":{"min":1}}}],"partialtemplates":[]}', 1796025858091);
INSERT INTO public.audit_log VALUES ('daff70a3-dbb2-4857-aa2f-d345febb2412', 'ce7f042a-d903-43b9-9e80-3901b99db51d', '80f70547-092a-4866-bebe-d30a464b040a', 'alice', 'provider.credentials.set', 'provider', 'inhouse', '127.0.0.1', NULL, '{"fields":["token"]}', 1796025858123);
INSERT INTO public.audit_log VALUES ('3718ce15-68b7-44da-b94b-21572ef340f1', 'ce7f042a-d903-43b9-9e80-3901b99db51d', '80f70547-092a-4866-bebe-d30a464b040a', 'alice', 'provider.test', 'provider', 'inhouse', '127.0.0.1', NULL, '{"provider":"inhouse","providertype":"exec","passed":true,"phases":[{"phase":"check","outcome":"passed","detail":"token accepted; nodes in /root/.corral-test-provider; credentials sha256 53fb4d9772676359501cdedb3dfac5d9a71fc31378eec891ddce35fb091ba8ec","elapsed_ms":316}],"worker":"26070-c7ef0ce5"}', 1796025858557);
INSERT INTO public.audit_log VALUES ('711ab2ac-efca-4251-a4e4-6b64398e341d', 'ce7f042a-d903-43b9-9e80-3901b99db51d', '80f70547-092a-4866-bebe-d30a464b040a', 'alice', 'cluster.create', 'cluster', 'shop', '127.0.0.1', NULL, '{"template":"box","size":2,"services":null}', 1796025858839);
INSERT INTO public.audit_log VALUES ('9f743b96-97c0-442b-9f8a-7dd33838b7d2', 'ce7f042a-d903-43b9-9e80-3901b99db51d', 'a20aba56-e441-42c1-810f-d303492dfe2f', 'admin', 'tenant.dedicated-workers', 'tenant', 'acme', '127.0.0.1', '{"dedicated_workers":false}', '{"dedicated_workers":true}', 1796025860339);
INSERT INTO public.audit_log VALUES ('a8f8b53a-3e72-4416-be98-d9606ad1a004', 'ce7f042a-d903-43b9-9e80-3901b99db51d', '80f70547-092a-4866-bebe-d30a464b040a', 'alice', 'cluster.create', 'cluster', 'later', '127.0.0.1', NULL, '{"template":"box","size":1,"services":null}', 1796025860377);


--
-- Data for Name: catalog_entities; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.catalog_entities VALUES ('00000000-0000-0000-0000-000000000001', 'providers', 'local', 1, '{"name":"local","description":"nodes as unprivileged sshd processes on this machine, each on its own loopback address","providertype":"local","provisioner":{}}', NULL, 1796025856013);
INSERT INTO public.catalog_entities VALUES ('00000000-0000-0000-0000-000000000001', 'providers', 'docker', 1, '{"name":"docker","description":"nodes as containers of this machine''s Docker engine, one network per cluster, memory and CPU limits from the hardware type","providertype":"docker","provisioner":{}}', NULL, 1796025856013);
INSERT INTO public.catalog_entities VALUES ('00000000-0000-0000-0000-000000000001', 'hardwaretypes', 'small', 1, '{"name":"small","description":"local: 1 GiB address space per process, nice 10; docker: a 512 MiB, half-CPU container","providermap":{"local":{"flavor":"local-small","memory_mb":1024,"nice":10,"cpus":1},"docker":{"flavor":"docker-small","memory_mb":512,"cpus":0.5}}}', NULL, 1796025856013);
INSERT INTO public.catalog_entities VALUES ('00000000-0000-0000-0000-000000000001', 'hardwaretypes', 'medium', 1, '{"name":"medium","description":"local: 2 GiB address space per process, nice 5; docker: a 1 GiB, 1-CPU container","providermap":{"local":{"flavor":"local-medium","memory_mb":2048,"nice":5,"cpus":2},"docker":{"flavor":"docker-medium","memory_mb":1024,"cpus":1}}}', NULL, 1796025856013);
INSERT INTO public.catalog_entities VALUES ('00000000-0000-0000-0000-000000000001', 'hardwaretypes', 'large', 1, '{"name":"large","description":"local: 4 GiB address space per process, normal priority; docker: a 2 GiB, 2-CPU container","providermap":{"local":{"flavor":"local-large","memory_mb":4096,"nice":0,"cpus":4},"docker":{"flavor":"docker-large","memory_mb":2048,"cpus":2}}}', NULL, 1796025856013);
INSERT INTO public.catalog_entities VALUES ('00000000-0000-0000-0000-000000000001', 'imagetypes', 'debian', 1, '{"name":"debian","description":"this machine''s Debian: the node runs the host''s own programs; on docker, Corral''s node image (Debian bookworm with sshd, built from Debian''s packages)","providermap":{"local":{"image":"host"},"docker":{"image":"corral-node"}}}', NULL, 1796025856013);
INSERT INTO public.catalog_entities VALUES ('00000000-0000-0000-0000-000000000001', 'services', 'base', 1, '{"name":"base","description":"every node: checks the tools the demo services use (python3)","dependencies":{},"provisioner":{"actions":{"install":{"type":"shell","fields":{"run":"command -v python3 > /dev/null || { echo ''python3 is missing on this node: apt-get install python3'' >&2; exit 1; }; echo \"base ready on $CORRAL_HOST\""}}}}}', NULL, 1796025856013);
INSERT INTO public.catalog_entities VALUES ('00000000-0000-0000-0000-000000000001', 'services', 'kv', 1, '{"name":"kv","description":"key-value store on port 7070 (python3, HTTP: GET/PUT /kv/KEY); the first kv node leads, the others follow its log and forward writes","stateful":true,"dependencies":{"install":{"requires":["base"]}},"provisioner":{"actions":{"install":{"type":"shell","fields":{"script":"corral-demo.sh","args":"install kv"}},"start":{"type":"shell","fields":{"script":"corral-demo.sh","args":"start kv --port 7070 --leader %ip.service.kv[0]%"}},"stop":{"type":"shell","fields":{"script":"corral-demo.sh","args":"stop kv"}},"remove":{"type":"shell","fields":{"script":"corral-demo.sh","args":"remove kv"}}}},"healthcheck":{"http":"http://%ip.self%:7070/health"},"links":[{"label":"kv leader health","url":"http://%ip.access_v4.service.kv[0]%:7070/health"}]}', NULL, 1796025856013);
INSERT INTO public.catalog_entities VALUES ('00000000-0000-0000-0000-000000000001', 'services', 'app', 1, '{"name":"app","description":"web app on port 8080 (python3): a page naming its node, counting visits in kv","dependencies":{"install":{"requires":["base"]},"runtime":{"requires":["kv"]}},"provisioner":{"actions":{"install":{"type":"shell","fields":{"script":"corral-demo.sh","args":"install app --release 1"}},"start":{"type":"shell","fields":{"script":"corral-demo.sh","args":"start app --port 8080 --kv %ip.service.kv% --title web-stack"}},"stop":{"type":"shell","fields":{"script":"corral-demo.sh","args":"stop app"}},"remove":{"type":"shell","fields":{"script":"corral-demo.sh","args":"remove app"}}}},"healthcheck":{"http":"http://%ip.self%:8080/health"}}', NULL, 1796025856013);
INSERT INTO public.catalog_entities VALUES ('00000000-0000-0000-0000-000000000001', 'services', 'lb', 1, '{"name":"lb","description":"round-robin HTTP load balancer on port 8000 (python3) in front of every app node","dependencies":{"install":{"requires":["base"]},"runtime":{"requires":["app"]}},"provisioner":{"actions":{"install":{"type":"shell","fields":{"script":"corral-demo.sh","args":"install lb"}},"start":{"type":"shell","fields":{"script":"corral-demo.sh","args":"start lb --port 8000"}},"stop":{"type":"shell","fields":{"script":"corral-demo.sh","args":"stop lb"}},"remove":{"type":"shell","fields":{"script":"corral-demo.sh","args":"remove lb"}},"configure":{"type":"shell","fields":{"script":"corral-demo.sh","args":"configure lb --backends %join(map(ip.service.app,''$:8080''),'','')%"}}}},"healthcheck":{"http":"http://%ip.self%:8000/lb/health"},"links":[{"label":"web site","url":"http://%ip.access_v4.service.lb[0]%:8000/"}]}', NULL, 1796025856013);
INSERT INTO public.catalog_entities VALUES ('00000000-0000-0000-0000-000000000001', 'services', 'primary', 1, '{"name":"primary","description":"Stackato role primary: the core node''s anchor (exactly one). Stand-in process answering HTTP on 9001","dependencies":{"install":{"requires":["base"]}},"provisioner":{"actions":{"install":{"type":"shell","fields":{"script":"corral-demo.sh","args":"install role"}},"start":{"type":"shell","fields":{"script":"corral-demo.sh","args":"start role --port 9001 --name primary --note ''stand-in: Stackato primary (cloud controller database, NATS, logs) has no Debian package''"}},"stop":{"type":"shell","fields":{"script":"corral-demo.sh","args":"stop role"}},"remove":{"type":"shell","fields":{"script":"corral-demo.sh","args":"remove role"}}}},"healthcheck":{"http":"http://%ip.self%:9001/health"}}', NULL, 1796025856013);
INSERT INTO public.catalog_entities VALUES ('00000000-0000-0000-0000-000000000001', 'services', 'controller', 1, '{"name":"controller","description":"Stackato role controller (cloud controller API). Stand-in process answering HTTP on 9002","dependencies":{"install":{"requires":["base"]},"runtime":{"requires":["primary"],"uses":["data-services"]}},"provisioner":{"actions":{"install":{"type":"shell","fields":{"script":"corral-demo.sh","args":"install role"}},"start":{"type":"shell","fields":{"script":"corral-demo.sh","args":"start role --port 9002 --name controller --note ''stand-in: Stackato cloud controller has no Debian package''"}},"stop":{"type":"shell","fields":{"script":"corral-demo.sh","args":"stop role"}},"remove":{"type":"shell","fields":{"script":"corral-demo.sh","args":"remove role"}}}},"healthcheck":{"http":"http://%ip.self%:9002/health"}}', NULL, 1796025856013);
INSERT INTO public.catalog_entities VALUES ('00000000-0000-0000-0000-000000000001', 'services', 'health-manager', 1, '{"name":"health-manager","description":"Stackato role health manager; must run beside the controller. Stand-in process on 9003","dependencies":{"install":{"requires":["base"]},"runtime":{"requires":["controller"]}},"provisioner":{"actions":{"install":{"type":"shell","fields":{"script":"corral-demo.sh","args":"install role"}},"start":{"type":"shell","fields":{"script":"corral-demo.sh","args":"start role --port 9003 --name health-manager --note ''stand-in: Stackato health manager has no Debian package''"}},"stop":{"type":"shell","fields":{"script":"corral-demo.sh","args":"stop role"}},"remove":{"type":"shell","fields":{"script":"corral-demo.sh","args":"remove role"}}}},"healthcheck":{"http":"http://%ip.self%:9003/health"}}', NULL, 1796025856013);
INSERT INTO public.catalog_entities VALUES ('ce7f042a-d903-43b9-9e80-3901b99db51d', 'services', 'note', 1, '{"name":"note","description":"writes a note naming its cluster","dependencies":{"install":{"requires":["base"]}},"provisioner":{"actions":{"configure":{"type":"shell","fields":{"run":"echo \"cluster $CORRAL_CLUSTER_NAME\" > note.txt"}},"start":{"type":"shell","fields":{"run":"cat note.txt"}}}}}', '80f70547-092a-4866-bebe-d30a464b040a', 1796025858081);
INSERT INTO public.catalog_entities VALUES ('00000000-0000-0000-0000-000000000001', 'services', 'dea', 1, '{"name":"dea","description":"Stackato role DEA (droplet execution agent): app instances; scales out. A python3 web app on 9100","dependencies":{"install":{"requires":["base"]},"runtime":{"uses":["controller"]}},"provisioner":{"actions":{"install":{"type":"shell","fields":{"script":"corral-demo.sh","args":"install app"}},"start":{"type":"shell","fields":{"script":"corral-demo.sh","args":"start app --port 9100 --title dea"}},"stop":{"type":"shell","fields":{"script":"corral-demo.sh","args":"stop app"}},"remove":{"type":"shell","fields":{"script":"corral-demo.sh","args":"remove app"}}}},"healthcheck":{"http":"http://%ip.self%:9100/health"}}', NULL, 1796025856013);
INSERT INTO public.catalog_entities VALUES ('00000000-0000-0000-0000-000000000001', 'services', 'router', 1, '{"name":"router","description":"Stackato role router: round-robin HTTP on 9080 to every DEA (python3)","dependencies":{"install":{"requires":["base"]},"runtime":{"requires":["dea"]}},"provisioner":{"actions":{"install":{"type":"shell","fields":{"script":"corral-demo.sh","args":"install lb"}},"start":{"type":"shell","fields":{"script":"corral-demo.sh","args":"start lb --port 9080"}},"stop":{"type":"shell","fields":{"script":"corral-demo.sh","args":"stop lb"}},"remove":{"type":"shell","fields":{"script":"corral-demo.sh","args":"remove lb"}},"configure":{"type":"shell","fields":{"script":"corral-demo.sh","args":"configure lb --backends %join(map(ip.service.dea,''$:9100''),'','')%"}}}},"healthcheck":{"http":"http://%ip.self%:9080/lb/health"},"links":[{"label":"paas router","url":"http://%ip.access_v4.service.router[0]%:9080/"}]}', NULL, 1796025856013);
INSERT INTO public.catalog_entities VALUES ('00000000-0000-0000-0000-000000000001', 'services', 'stager', 1, '{"name":"stager","description":"Stackato role stager (builds droplets). Stand-in process answering HTTP on 9004","dependencies":{"install":{"requires":["base"]},"runtime":{"requires":["controller"]}},"provisioner":{"actions":{"install":{"type":"shell","fields":{"script":"corral-demo.sh","args":"install role"}},"start":{"type":"shell","fields":{"script":"corral-demo.sh","args":"start role --port 9004 --name stager --note ''stand-in: Stackato stager has no Debian package''"}},"stop":{"type":"shell","fields":{"script":"corral-demo.sh","args":"stop role"}},"remove":{"type":"shell","fields":{"script":"corral-demo.sh","args":"remove role"}}}},"healthcheck":{"http":"http://%ip.self%:9004/health"}}', NULL, 1796025856013);
INSERT INTO public.catalog_entities VALUES ('00000000-0000-0000-0000-000000000001', 'services', 'mysql', 1, '{"name":"mysql","description":"data service mysql. Stand-in process on 13306 (MariaDB''s server wants a system user and datadir set up as root)","stateful":true,"dependencies":{"install":{"requires":["base"]},"provides":["data-services"]},"provisioner":{"actions":{"install":{"type":"shell","fields":{"script":"corral-demo.sh","args":"install role"}},"start":{"type":"shell","fields":{"script":"corral-demo.sh","args":"start role --port 13306 --name mysql --note ''stand-in: not a MySQL server''"}},"stop":{"type":"shell","fields":{"script":"corral-demo.sh","args":"stop role"}},"remove":{"type":"shell","fields":{"script":"corral-demo.sh","args":"remove role"}}}},"healthcheck":{"http":"http://%ip.self%:13306/health"}}', NULL, 1796025856013);
INSERT INTO public.catalog_entities VALUES ('00000000-0000-0000-0000-000000000001', 'services', 'postgresql', 1, '{"name":"postgresql","description":"data service postgresql. Stand-in process on 15432 (PostgreSQL refuses to run as root)","stateful":true,"dependencies":{"install":{"requires":["base"]},"provides":["data-services"]},"provisioner":{"actions":{"install":{"type":"shell","fields":{"script":"corral-demo.sh","args":"install role"}},"start":{"type":"shell","fields":{"script":"corral-demo.sh","args":"start role --port 15432 --name postgresql --note ''stand-in: not a PostgreSQL server''"}},"stop":{"type":"shell","fields":{"script":"corral-demo.sh","args":"stop role"}},"remove":{"type":"shell","fields":{"script":"corral-demo.sh","args":"remove role"}}}},"healthcheck":{"http":"http://%ip.self%:15432/health"}}', NULL, 1796025856013);
INSERT INTO public.catalog_entities VALUES ('00000000-0000-0000-0000-000000000001', 'services', 'redis', 1, '{"name":"redis","description":"data service redis: Debian''s redis-server on 16379, no persistence","dependencies":{"install":{"requires":["base"]},"provides":["data-services"]},"provisioner":{"actions":{"install":{"type":"shell","fields":{"script":"corral-demo.sh","args":"install redis"}},"start":{"type":"shell","fields":{"script":"corral-demo.sh","args":"start redis --port 16379"}},"stop":{"type":"shell","fields":{"script":"corral-demo.sh","args":"stop redis"}},"remove":{"type":"shell","fields":{"script":"corral-demo.sh","args":"remove redis"}}}},"healthcheck":{"script":"corral-demo.sh","args":"probe redis --port 16379"}}', NULL, 1796025856013);
INSERT INTO public.catalog_entities VALUES ('00000000-0000-0000-0000-000000000001', 'services', 'mongodb', 1, '{"name":"mongodb","description":"data service mongodb. Stand-in process on 17017 (Debian has no MongoDB)","stateful":true,"dependencies":{"install":{"requires":["base"]},"provides":["data-services"]},"provisioner":{"actions":{"install":{"type":"shell","fields":{"script":"corral-demo.sh","args":"install role"}},"start":{"type":"shell","fields":{"script":"corral-demo.sh","args":"start role --port 17017 --name mongodb --note ''stand-in: Debian has no MongoDB''"}},"stop":{"type":"shell","fields":{"script":"corral-demo.sh","args":"stop role"}},"remove":{"type":"shell","fields":{"script":"corral-demo.sh","args":"remove role"}}}},"healthcheck":{"http":"http://%ip.self%:17017/health"}}', NULL, 1796025856013);
INSERT INTO public.catalog_entities VALUES ('00000000-0000-0000-0000-000000000001', 'services', 'filesystem', 1, '{"name":"filesystem","description":"data service filesystem (persistent file system for apps). Stand-in process on 9005","stateful":true,"dependencies":{"install":{"requires":["base"]},"provides":["data-services"]},"provisioner":{"actions":{"install":{"type":"shell","fields":{"script":"corral-demo.sh","args":"install role"}},"start":{"type":"shell","fields":{"script":"corral-demo.sh","args":"start role --port 9005 --name filesystem --note ''stand-in: the Stackato filesystem service has no Debian package''"}},"stop":{"type":"shell","fields":{"script":"corral-demo.sh","args":"stop role"}},"remove":{"type":"shell","fields":{"script":"corral-demo.sh","args":"remove role"}}}},"healthcheck":{"http":"http://%ip.self%:9005/health"}}', NULL, 1796025856013);
INSERT INTO public.catalog_entities VALUES ('00000000-0000-0000-0000-000000000001', 'services', 'rabbit', 1, '{"name":"rabbit","description":"data service rabbit. Stand-in process on 15672 (RabbitMQ needs Erlang''s epmd and a system user)","dependencies":{"install":{"requires":["base"]},"provides":["data-services"]},"provisioner":{"actions":{"install":{"type":"shell","fields":{"script":"corral-demo.sh","args":"install role"}},"start":{"type":"shell","fields":{"script":"corral-demo.sh","args":"start role --port 15672 --name rabbit --note ''stand-in: not a RabbitMQ broker''"}},"stop":{"type":"shell","fields":{"script":"corral-demo.sh","args":"stop role"}},"remove":{"type":"shell","fields":{"script":"corral-demo.sh","args":"remove role"}}}},"healthcheck":{"http":"http://%ip.self%:15672/health"}}', NULL, 1796025856013);
INSERT INTO public.catalog_entities VALUES ('00000000-0000-0000-0000-000000000001', 'services', 'memcached', 1, '{"name":"memcached","description":"data service memcached: Debian''s memcached on 11211 (32 MiB)","dependencies":{"install":{"requires":["base"]},"provides":["data-services"]},"provisioner":{"actions":{"install":{"type":"shell","fields":{"script":"corral-demo.sh","args":"install memcached"}},"start":{"type":"shell","fields":{"script":"corral-demo.sh","args":"start memcached --port 11211"}},"stop":{"type":"shell","fields":{"script":"corral-demo.sh","args":"stop memcached"}},"remove":{"type":"shell","fields":{"script":"corral-demo.sh","args":"remove memcached"}}}},"healthcheck":{"script":"corral-demo.sh","args":"probe memcached --port 11211"}}', NULL, 1796025856013);
INSERT INTO public.catalog_entities VALUES ('00000000-0000-0000-0000-000000000001', 'services', 'kv-ansible', 1, '{"name":"kv-ansible","description":"the key-value store on port 7070 written as an Ansible playbook (files/kv.yml, a tag per action): the first kv-ansible node leads, the others follow","stateful":true,"dependencies":{"install":{"requires":["base"]}},"provisioner":{"actions":{"install":{"type":"ansible","fields":{"playbook":"files/kv.yml","tags":"install"}},"start":{"type":"ansible","fields":{"playbook":"files/kv.yml","tags":"start","extra_vars":{"kv_port":7070,"kv_leader":"%ip.service.kv-ansible[0]%"}}},"stop":{"type":"ansible","fields":{"playbook":"files/kv.yml","tags":"stop"}},"remove":{"type":"ansible","fields":{"playbook":"files/kv.yml","tags":"remove"}}}},"healthcheck":{"http":"http://%ip.self%:7070/health"},"links":[{"label":"kv leader health","url":"http://%ip.access_v4.service.kv-ansible[0]%:7070/health"}]}', NULL, 1796025856013);
INSERT INTO public.catalog_entities VALUES ('00000000-0000-0000-0000-000000000001', 'services', 'lb-puppet', 1, '{"name":"lb-puppet","description":"a round-robin HTTP load balancer on port 8000 in front of every kv-ansible node, written as a Puppet manifest (files/lb.pp, a branch per action)","dependencies":{"install":{"requires":["base"]},"runtime":{"requires":["kv-ansible"]}},"provisioner":{"actions":{"configure":{"type":"puppet","fields":{"manifest":"files/lb.pp","facts":{"lb_backends":"%join(map(ip.service.kv-ansible,''$:7070''),'','')%"}}},"start":{"type":"puppet","fields":{"manifest":"files/lb.pp","facts":{"lb_port":"8000"}}},"stop":{"type":"puppet","fields":{"manifest":"files/lb.pp"}}}},"healthcheck":{"http":"http://%ip.self%:8000/lb/health"},"links":[{"label":"kv through the balancer","url":"http://%ip.access_v4.service.lb-puppet[0]%:8000/health"}]}', NULL, 1796025856013);
INSERT INTO public.catalog_entities VALUES ('00000000-0000-0000-0000-000000000001', 'clustertemplates', 'web-stack', 1, '{"name":"web-stack","description":"a load balancer in front of N app nodes sharing a key-value store; lb, kv and each app on nodes of their own (3 nodes at least)","compatibility":{"services":["base","kv","app","lb","memcached"],"hardwaretypes":["small","medium","large"],"imagetypes":["debian"]},"defaults":{"services":["base","kv","app","lb"],"provider":"local","hardwaretype":"small","imagetype":"debian","config":{}},"constraints":{"layout":{"mustcoexist":[],"cantcoexist":[["lb","app"],["app","kv"],["lb","kv"]]},"services":{"lb":{"quantities":{"min":1,"max":1}},"kv":{"quantities":{"min":1,"max":1}},"app":{"quantities":{"min":1}},"memcached":{"quantities":{"min":1,"max":1}}},"size":{"min":3,"max":12}},"administration":{"leaseduration":{"initial":0,"max":0,"step":0}},"links":[{"label":"web site","url":"http://%ip.access_v4.service.lb[0]%:8000/"}]}', NULL, 1796025856013);
INSERT INTO public.catalog_entities VALUES ('00000000-0000-0000-0000-000000000001', 'clustertemplates', 'kv-cluster', 1, '{"name":"kv-cluster","description":"a replicated key-value store: the first node leads, the others follow; odd sizes (1, 3, 5, 7) so a majority always exists","compatibility":{"services":["base","kv"],"hardwaretypes":["small","medium","large"],"imagetypes":["debian"]},"defaults":{"services":["base","kv"],"provider":"local","hardwaretype":"medium","imagetype":"debian","config":{}},"constraints":{"layout":{"mustcoexist":[],"cantcoexist":[]},"services":{"kv":{"quantities":{"min":1}}},"size":{"min":1,"max":7,"step":2}},"administration":{"leaseduration":{"initial":0,"max":0,"step":0}},"links":[{"label":"kv leader","url":"http://%ip.access_v4.service.kv[0]%:7070/health"}]}', NULL, 1796025856013);
INSERT INTO public.catalog_entities VALUES ('00000000-0000-0000-0000-000000000001', 'clustertemplates', 'paas', 1, '{"name":"paas","description":"Stackato-style roles: one core node (primary + controller + health manager), routers and DEAs scaling out, data services; one node holds everything, more nodes add routers and DEAs","compatibility":{"services":["base","primary","controller","health-manager","router","dea","stager","mysql","postgresql","redis","mongodb","filesystem","rabbit","memcached"],"hardwaretypes":["small","medium","large"],"imagetypes":["debian"]},"defaults":{"services":["base","primary","controller","health-manager","router","dea","stager","mysql","postgresql","redis","mongodb","filesystem","rabbit","memcached"],"provider":"local","hardwaretype":"small","imagetype":"debian","config":{}},"constraints":{"layout":{"mustcoexist":[["primary","controller"],["controller","health-manager"]],"cantcoexist":[]},"services":{"primary":{"quantities":{"min":1,"max":1}},"controller":{"quantities":{"min":1,"max":1}},"health-manager":{"quantities":{"min":1,"max":1}},"stager":{"quantities":{"min":1,"max":1}},"mysql":{"quantities":{"min":1,"max":1}},"postgresql":{"quantities":{"min":1,"max":1}},"redis":{"quantities":{"min":1,"max":1}},"mongodb":{"quantities":{"min":1,"max":1}},"filesystem":{"quantities":{"min":1,"max":1}},"rabbit":{"quantities":{"min":1,"max":1}},"memcached":{"quantities":{"min":1,"max":1}},"router":{"quantities":{"min":1}},"dea":{"quantities":{"min":1}}},"size":{"min":1,"max":10}},"administration":{"leaseduration":{"initial":0,"max":0,"step":0}},"links":[{"label":"paas router","url":"http://%ip.access_v4.service.router[0]%:9080/"},{"label":"primary","url":"http://%ip.access_v4.service.primary[0]%:9001/"}]}', NULL, 1796025856013);
INSERT INTO public.catalog_entities VALUES ('00000000-0000-0000-0000-000000000001', 'clustertemplates', 'kv-automated', 1, '{"name":"kv-automated","description":"the key-value store on N nodes, installed by an Ansible playbook, behind a load balancer set up by a Puppet manifest (2 nodes at least)","compatibility":{"services":["base","kv-ansible","lb-puppet"],"hardwaretypes":["small","medium","large"],"imagetypes":["debian"]},"defaults":{"services":["base","kv-ansible","lb-puppet"],"provider":"local","hardwaretype":"small","imagetype":"debian","config":{}},"constraints":{"layout":{"mustcoexist":[],"cantcoexist":[["lb-puppet","kv-ansible"]]},"services":{"lb-puppet":{"quantities":{"min":1,"max":1}},"kv-ansible":{"quantities":{"min":1}}},"size":{"min":2,"max":12}},"administration":{"leaseduration":{"initial":0,"max":0,"step":0}},"links":[{"label":"kv through the balancer","url":"http://%ip.access_v4.service.lb-puppet[0]%:8000/health"}]}', NULL, 1796025856013);
INSERT INTO public.catalog_entities VALUES ('ce7f042a-d903-43b9-9e80-3901b99db51d', 'providers', 'local', 1, '{"name":"local","description":"nodes as local sshd processes","providertype":"local","provisioner":{}}', '80f70547-092a-4866-bebe-d30a464b040a', 1796025858081);
INSERT INTO public.catalog_entities VALUES ('ce7f042a-d903-43b9-9e80-3901b99db51d', 'providers', 'inhouse', 1, '{"name":"inhouse","description":"the in-house cloud of the test plugin; its check passes only with the tenant''s token","providertype":"exec","provisioner":{"plugin":"corral-test-provider","expect_token_sha256":"49d298523dae390dac357989411f3dfa8fcb19abc77b5134ebc7daf973f2689c"}}', '80f70547-092a-4866-bebe-d30a464b040a', 1796025858081);
INSERT INTO public.catalog_entities VALUES ('ce7f042a-d903-43b9-9e80-3901b99db51d', 'hardwaretypes', 'small', 1, '{"name":"small","providermap":{"local":{"flavor":"local-small"},"inhouse":{"flavor":"local-small"}}}', '80f70547-092a-4866-bebe-d30a464b040a', 1796025858081);
INSERT INTO public.catalog_entities VALUES ('ce7f042a-d903-43b9-9e80-3901b99db51d', 'imagetypes', 'debian', 1, '{"name":"debian","providermap":{"local":{"image":"host"},"inhouse":{"image":"host"}}}', '80f70547-092a-4866-bebe-d30a464b040a', 1796025858081);
INSERT INTO public.catalog_entities VALUES ('ce7f042a-d903-43b9-9e80-3901b99db51d', 'services', 'base', 1, '{"name":"base","description":"prepares the node","dependencies":{},"provisioner":{"actions":{"install":{"type":"shell","fields":{"run":"mkdir -p \"$HOME/data\" && echo base installed on $CORRAL_HOST"}},"remove":{"type":"shell","fields":{"run":"rm -rf \"$HOME/data\""}}}}}', '80f70547-092a-4866-bebe-d30a464b040a', 1796025858081);
INSERT INTO public.catalog_entities VALUES ('ce7f042a-d903-43b9-9e80-3901b99db51d', 'clustertemplates', 'box', 1, '{"name":"box","description":"nodes with a note","compatibility":{"services":["base","note"],"hardwaretypes":["small"],"imagetypes":["debian"]},"defaults":{"services":["base","note"],"provider":"local","hardwaretype":"small","imagetype":"debian","config":{}},"constraints":{"size":{"min":1}}}', '80f70547-092a-4866-bebe-d30a464b040a', 1796025858081);


--
-- Data for Name: client_keys; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.client_keys VALUES ('ssh-user-ca:ce7f042a-d903-43b9-9e80-3901b99db51d', 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIIidQleQ97ElPy6T5c9dWCOzlyfy2Arkwc3tqy4Kp5q8 corral user CA ce7f042a-d903-43b9-9e80-3901b99db51d', 'sealed:v1:vnKX16Xg3jrKs8FageZwna+JYyhbBH2cm9YznCIDlqCyGpv2IkMLfM7XYE89TZXZ3D63ePGhTJpgtfvs397uZiuvQ5i2tZok5UST/D126N9kFuNL4k9m6z0RUgFniTsqinJu7iYPiWL3F4OFCCetb2uY1FzFWmKi7kLsCDtvMpFYfCex9XjZzgMf2H0rWhx+dFjeWgTjOoTt1QU2K/9p/xhN4qAARUK4bNgT0suCAVuRc2eMChR2Vb129OIs8QSI2jxjTpWTrQF5LLD3ysbaqyFm1p44kYaaFeeNFUoXrpjBapwI3jqbtOVcmhvnCzUk2tFdJqVTBmqWybVLCQ8PAtmVYZ1XCYvKxkS6Sm++teq1unG8KzUanDhK9pu9rTQVZ1F2/0ETEgMi203KYbiRXXnDYMX2xnngNNOjJMNeiXapbnZJQ3jB5XCsGFDH3xGJ15kkTi1EGx+AIoJkFaCAaUO71S+9zamgmEZmGzgca4jFAftf3DAeg1JN4WkoCqs4bvcy3r6DjGhjfCOWt8xI5RoT8wWfwh7Sn3+cDFVp/z1WFwTKyqaBaYVLUxW2xDBz2Rm2+ZhCyphnVdSY04xYDxj+t8SPGYiDXFBsYozxkZrHgQzvp+Acq6DEOHORE2ya', 1796025858870);


--
-- Data for Name: clusters; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.clusters VALUES ('b1a7055b-ac1c-4c19-82db-03d4220e35cb', 'ce7f042a-d903-43b9-9e80-3901b99db51d', 'shop', 'box', 1, '{"name":"box","description":"nodes with a note","compatibility":{"services":["base","note"],"hardwaretypes":["small"],"imagetypes":["debian"]},"defaults":{"services":["base","note"],"provider":"local","hardwaretype":"small","imagetype":"debian","config":{}},"constraints":{"size":{"min":1}}}', '80f70547-092a-4866-bebe-d30a464b040a', 'active', '{"template":"box","nodes":[{"number":1000,"hardwaretype":"small","imagetype":"debian","services":["base","note"]},{"number":1001,"hardwaretype":"small","imagetype":"debian","services":["base","note"]}]}', '{}', NULL, 1796025858818, 1796025859389, '{"providers":[{"name":"local","description":"nodes as local sshd processes","providertype":"local","provisioner":{}}],"hardwaretypes":[{"name":"small","providermap":{"local":{"flavor":"local-small"},"inhouse":{"flavor":"local-small"}}}],"imagetypes":[{"name":"debian","providermap":{"local":{"image":"host"},"inhouse":{"image":"host"}}}],"services":[{"name":"base","description":"prepares the node","dependencies":{},"provisioner":{"actions":{"install":{"type":"shell","fields":{"run":"mkdir -p \"$HOME/data\" && echo base installed on $CORRAL_HOST"}},"remove":{"type":"shell","fields":{"run":"rm -rf \"$HOME/data\""}}}}},{"name":"note","description":"writes a note naming its cluster","dependencies":{"install":{"requires":["base"]}},"provisioner":{"actions":{"configure":{"type":"shell","fields":{"run":"echo \"cluster $CORRAL_CLUSTER_NAME\" > note.txt"}},"start":{"type":"shell","fields":{"run":"cat note.txt"}}}}}],"clustertemplates":[{"name":"box","description":"nodes with a note","compatibility":{"services":["base","note"],"hardwaretypes":["small"],"imagetypes":["debian"]},"defaults":{"services":["base","note"],"provider":"local","hardwaretype":"small","imagetype":"debian","config":{}},"constraints":{"size":{"min":1}}}],"partialtemplates":[]}', 'local', 6, 0, NULL, NULL, NULL, 0, NULL, NULL);
INSERT INTO public.clusters VALUES ('5f75fde4-9c3b-483d-8efb-ca113a389313', 'ce7f042a-d903-43b9-9e80-3901b99db51d', 'later', 'box', 1, '{"name":"box","description":"nodes with a note","compatibility":{"services":["base","note"],"hardwaretypes":["small"],"imagetypes":["debian"]},"defaults":{"services":["base","note"],"provider":"local","hardwaretype":"small","imagetype":"debian","config":{}},"constraints":{"size":{"min":1}}}', '80f70547-092a-4866-bebe-d30a464b040a', 'creating', '{"template":"box","nodes":[]}', '{}', NULL, 1796025860365, 1796025860365, '{"providers":[{"name":"local","description":"nodes as local sshd processes","providertype":"local","provisioner":{}}],"hardwaretypes":[{"name":"small","providermap":{"local":{"flavor":"local-small"},"inhouse":{"flavor":"local-small"}}}],"imagetypes":[{"name":"debian","providermap":{"local":{"image":"host"},"inhouse":{"image":"host"}}}],"services":[{"name":"base","description":"prepares the node","dependencies":{},"provisioner":{"actions":{"install":{"type":"shell","fields":{"run":"mkdir -p \"$HOME/data\" && echo base installed on $CORRAL_HOST"}},"remove":{"type":"shell","fields":{"run":"rm -rf \"$HOME/data\""}}}}},{"name":"note","description":"writes a note naming its cluster","dependencies":{"install":{"requires":["base"]}},"provisioner":{"actions":{"configure":{"type":"shell","fields":{"run":"echo \"cluster $CORRAL_CLUSTER_NAME\" > note.txt"}},"start":{"type":"shell","fields":{"run":"cat note.txt"}}}}}],"clustertemplates":[{"name":"box","description":"nodes with a note","compatibility":{"services":["base","note"],"hardwaretypes":["small"],"imagetypes":["debian"]},"defaults":{"services":["base","note"],"provider":"local","hardwaretype":"small","imagetype":"debian","config":{}},"constraints":{"size":{"min":1}}}],"partialtemplates":[]}', 'local', 0, 0, NULL, NULL, NULL, 0, NULL, NULL);


--
-- Data for Name: cost_intervals; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: hook_attempts; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: hook_deliveries; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: hooks; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: job_documents; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.job_documents VALUES ('fa54b9a7-2558-404b-b99d-4f1562f0b819', '{"template":"box","nodes":[]}', '{"template":"box","nodes":[{"number":1000,"hardwaretype":"small","imagetype":"debian","services":["base","note"]},{"number":1001,"hardwaretype":"small","imagetype":"debian","services":["base","note"]}]}', '{"tasks":[{"id":0,"node":1000,"service":null,"action":"create","after":[],"stage":0},{"id":1,"node":1001,"service":null,"action":"create","after":[],"stage":0},{"id":2,"node":1000,"service":null,"action":"confirm","after":[0],"stage":1},{"id":3,"node":1001,"service":null,"action":"confirm","after":[1],"stage":1},{"id":4,"node":1000,"service":null,"action":"bootstrap","after":[2],"stage":2},{"id":5,"node":1001,"service":null,"action":"bootstrap","after":[3],"stage":2},{"id":6,"node":1000,"service":"note","action":"configure","after":[4],"stage":3},{"id":7,"node":1001,"service":"note","action":"configure","after":[5],"stage":3},{"id":8,"node":1000,"service":"base","action":"install","after":[4,6],"stage":4},{"id":9,"node":1001,"service":"base","action":"install","after":[5,7],"stage":4},{"id":10,"node":1000,"service":"note","action":"start","after":[6,8],"stage":5},{"id":11,"node":1001,"service":"note","action":"start","after":[7,9],"stage":5}]}', NULL, NULL, NULL);
INSERT INTO public.job_documents VALUES ('e3d2279d-eb6f-4060-ae33-2ca2d3b89230', '{"template":"box","nodes":[]}', '{"template":"box","nodes":[{"number":1000,"hardwaretype":"small","imagetype":"debian","services":["base","note"]}]}', '{"tasks":[{"id":0,"node":1000,"service":null,"action":"create","after":[],"stage":0},{"id":1,"node":1000,"service":null,"action":"confirm","after":[0],"stage":1},{"id":2,"node":1000,"service":null,"action":"bootstrap","after":[1],"stage":2},{"id":3,"node":1000,"service":"note","action":"configure","after":[2],"stage":3},{"id":4,"node":1000,"service":"base","action":"install","after":[2,3],"stage":4},{"id":5,"node":1000,"service":"note","action":"start","after":[3,4],"stage":5}]}', NULL, NULL, NULL);


--
-- Data for Name: jobs; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.jobs VALUES ('fa54b9a7-2558-404b-b99d-4f1562f0b819', 'ce7f042a-d903-43b9-9e80-3901b99db51d', 'b1a7055b-ac1c-4c19-82db-03d4220e35cb', 'create', 'succeeded', 12, 12, 1796025858818, 1796025858839, 1796025859389, NULL, 'creating', 'active', 'failed', '80f70547-092a-4866-bebe-d30a464b040a', 0);
INSERT INTO public.jobs VALUES ('e3d2279d-eb6f-4060-ae33-2ca2d3b89230', 'ce7f042a-d903-43b9-9e80-3901b99db51d', '5f75fde4-9c3b-483d-8efb-ca113a389313', 'create', 'queued', 6, 0, 1796025860365, NULL, NULL, NULL, 'creating', 'active', 'failed', '80f70547-092a-4866-bebe-d30a464b040a', 0);


--
-- Data for Name: login_attempts; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: nodes; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.nodes VALUES ('96da54b1-0d44-4de5-ae62-8c8e596e5a20', 'b1a7055b-ac1c-4c19-82db-03d4220e35cb', 1000, '127.1.0.2', 'small', 'debian', '["base","note"]', '{"id":"b1a7055b-ac1c-4c19-82db-03d4220e35cb-1000","provider":"local","host":"127.1.0.2","port":39031,"user":"corral-c5f70fb2c1","host_key":"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDiKITSfPNtWJECj81Mz9ZAGRTprXyXlnxX4BkH94D/n","client_key_path":"/tmp/corral-fixture.vwNDMd/postgres/nodes/b1a7055b-ac1c-4c19-82db-03d4220e35cb-1000/client_ed25519_key","provider_state":{"dir":"/tmp/corral-fixture.vwNDMd/postgres/nodes/b1a7055b-ac1c-4c19-82db-03d4220e35cb-1000","pid":26496,"limits":{"max_virtual_memory_kib":null,"nice":null,"memory_mb":null,"cpu_millis":null},"home_area":"/var/lib/corral/node-homes/279b62fd6d46/b1a7055b-ac1c-4c19-82db-03d4220e35cb-1000","cgroup":"/sys/fs/cgroup/unified/corral-nodes/279b62fd6d46-b1a7055b-ac1c-4c19-82db-03d4220e35cb-1000"}}', 'ready', 1796025858979, 1796025859251, 5, NULL, NULL);
INSERT INTO public.nodes VALUES ('76288ce8-a0dc-4d03-976a-cfa3b3a02a10', 'b1a7055b-ac1c-4c19-82db-03d4220e35cb', 1001, '127.1.0.1', 'small', 'debian', '["base","note"]', '{"id":"b1a7055b-ac1c-4c19-82db-03d4220e35cb-1001","provider":"local","host":"127.1.0.1","port":42825,"user":"corral-c5f70fb2c1","host_key":"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIL5dBMx0ks2sIgkSgF+EsqbWJpiG3ll+juPs6PqOxUSU","client_key_path":"/tmp/corral-fixture.vwNDMd/postgres/nodes/b1a7055b-ac1c-4c19-82db-03d4220e35cb-1001/client_ed25519_key","provider_state":{"dir":"/tmp/corral-fixture.vwNDMd/postgres/nodes/b1a7055b-ac1c-4c19-82db-03d4220e35cb-1001","pid":26497,"limits":{"max_virtual_memory_kib":null,"nice":null,"memory_mb":null,"cpu_millis":null},"home_area":"/var/lib/corral/node-homes/279b62fd6d46/b1a7055b-ac1c-4c19-82db-03d4220e35cb-1001","cgroup":"/sys/fs/cgroup/unified/corral-nodes/279b62fd6d46-b1a7055b-ac1c-4c19-82db-03d4220e35cb-1001"}}', 'ready', 1796025858980, 1796025859264, 6, NULL, NULL);


--
-- Data for Name: plugin_resource_blobs; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.plugin_resource_blobs VALUES ('00000000-0000-0000-0000-000000000001', 'scripts', 'corral-demo.sh', 1, '\x23212f62696e2f73680a232052756e73206f6e65206f66207468652064656d6f20636174616c6f672773207365727669636573206f6e2061206c6f63616c206e6f64653a20636f7272616c2d64656d6f2e736820414354494f4e204b494e44205b415247535d0a23202020414354494f4e2020696e7374616c6c207c20636f6e666967757265207c207374617274207c2070726f6265207c2073746f70207c2072656d6f76650a232020204b494e44202020206b76207c20617070207c206c62207c20726f6c652028707974686f6e33207365727665727320696e20636f7272616c2d64656d6f2e707929207c207265646973207c206d656d6361636865640a2320202041524753202020202d2d706f7274204e202873746172742c2070726f6265292c202d2d6261636b656e647320412c422028636f6e666967757265206c62292c202d2d72656c6561736520522028696e7374616c6c3a0a2320202020202020202020207468652072656c6561736520616e2061707020736572766573290a2320436f7272616c2072756e7320697420696e2074686520736572766963652773206f776e206469726563746f7279202824484f4d452f636f7272616c2f73657276696365732f4e414d45292c20736f20746865207069640a232066696c6520616e64206c6f67206f6620656163682073657276696365206c6976652061706172742e2073746172742072657475726e73206f6e6c79206f6e636520746865207365727669636520616e73776572730a2320697473206865616c746820636865636b2c20616e64206661696c7320776974682074686520736572766963652773206c6f67206f74686572776973652e0a736574202d65750a616374696f6e3d247b313a3f75736167653a20636f7272616c2d64656d6f2e736820414354494f4e204b494e44205b415247535d7d0a6b696e643d247b323a3f75736167653a20636f7272616c2d64656d6f2e736820414354494f4e204b494e44205b415247535d7d0a736869667420320a64656d6f3d2224484f4d452f636f7272616c2f7265736f75726365732f736372697074732f636f7272616c2d64656d6f2e7079220a686f73743d247b434f5252414c5f484f53543a3f434f5252414c5f484f5354206973206e6f74207365747d0a2320466577206d616c6c6f63206172656e61733a2065616368207265736572766573203634204d6942206f6620616464726573732073706163652c20776869636820636f756e747320616761696e7374207468650a2320686172647761726520747970652773206d656d6f7279206361702028756c696d6974202d76292074686f756768206974206973206e6576657220757365642e0a6578706f7274204d414c4c4f435f4152454e415f4d41583d320a0a706f72743d22220a6261636b656e64733d22220a72656c656173653d22220a707265763d22220a666f722061726720696e20222440223b20646f0a202063617365202224707265762220696e0a202020202d2d706f72742920706f72743d24617267203b3b0a202020202d2d6261636b656e647329206261636b656e64733d24617267203b3b0a202020202d2d72656c65617365292072656c656173653d24617267203b3b0a2020657361630a2020707265763d246172670a646f6e650a0a6e6565642829207b0a2020636f6d6d616e64202d762022243122203e202f6465762f6e756c6c20323e26312026262072657475726e20300a20206563686f20222431206973206e6f7420696e7374616c6c6564206f6e2074686973206d616368696e653a20243222203e26320a20206578697420310a7d0a0a2320576865746865722070726f63657373202431207374696c6c2072756e732e204120736572766963652074686174206578697465642073746179732061207a6f6d62696520756e74696c2069747320706172656e740a232072656170732069742c20616e642069747320706172656e742069732077686174657665722061646f7074656420697420285049442031206f6e2061206c6f63616c206e6f6465293a20736f6d6520696e69740a232070726f6772616d732072656170206f6e6c79206576657279207365636f6e64206f722074776f2c20736f20606b696c6c202d306020616c6f6e6520776f756c642077616974206f6e206120636f727073652e0a616c6976652829207b0a20206b696c6c202d30202224312220323e202f6465762f6e756c6c207c7c2072657475726e20310a202073746174653d24287365642027732f2e2a29202f2f2720222f70726f632f24312f737461742220323e202f6465762f6e756c6c207c20637574202d6331290a20205b20222473746174652220213d205a205d202626205b202d6e202224737461746522205d0a7d0a0a72756e6e696e672829207b0a20205b202d6620706964205d20262620616c697665202224286361742070696429220a7d0a0a73746f702829207b0a20205b202d6620706964205d207c7c2072657475726e20300a20207069643d242863617420706964290a20202320736574736964206d61646520746865207365727669636520697473206f776e2070726f636573732067726f75703a20656e64206974207769746820697473206368696c6472656e2e0a20206b696c6c202d5445524d202d2d20222d247069642220323e202f6465762f6e756c6c207c7c206b696c6c202d5445524d2022247069642220323e202f6465762f6e756c6c207c7c20747275650a202074726965733d300a20207768696c6520616c69766520222470696422202626205b202224747269657322202d6c7420323530205d3b20646f0a20202020736c65657020302e30320a2020202074726965733d2428287472696573202b203129290a2020646f6e650a20206b696c6c202d4b494c4c202d2d20222d247069642220323e202f6465762f6e756c6c207c7c20747275650a2020726d202d66207069640a7d0a0a63617365202224616374696f6e2220696e0a2020696e7374616c6c290a202020206e65656420707974686f6e332022696e7374616c6c20707974686f6e3320286170742d67657420696e7374616c6c20707974686f6e3329220a20202020636173652022246b696e642220696e0a202020202020726564697329206e6565642072656469732d736572766572202272756e20736372697074732f626f6f7473747261702e73682028697420696e7374616c6c732072656469732d7365727665722922203b3b0a2020202020206d656d63616368656429206e656564206d656d636163686564202272756e20736372697074732f626f6f7473747261702e73682028697420696e7374616c6c73206d656d6361636865642922203b3b0a20202020657361630a202020206d6b646972202d7020646174610a2020202023205468652072656c656173652074686520617070207365727665732066726f6d20697473206e6578742073746172742028616e20757067726164652773207265696e7374616c6c206368616e676573206974292e0a202020205b202d7a20222472656c6561736522205d207c7c207072696e7466202725735c6e2720222472656c6561736522203e2072656c656173650a202020206563686f2022246b696e6420696e7374616c6c6564206f6e2024686f7374247b72656c656173653a2b202872656c65617365202472656c65617365297d220a202020203b3b0a2020636f6e666967757265290a202020206966205b2022246b696e6422203d206c62205d3b207468656e0a2020202020202320546865206c622072652d726561647320746869732066696c65207768656e206974206368616e6765733a2061207265636f6e666967757265206e65656473206e6f20726573746172742e0a2020202020207072696e7466202725735c6e272022246261636b656e647322207c20747220272c2720275c6e27207c2073656420272f5e242f6427203e206261636b656e64732e6e65770a2020202020206d76206261636b656e64732e6e6577206261636b656e64730a2020202020206563686f20226c62206261636b656e64733a202428747220275c6e2720272027203c206261636b656e647329220a2020202066690a202020203b3b0a20207374617274290a2020202069662072756e6e696e673b207468656e0a2020202020206563686f2022246b696e6420616c72656164792072756e6e696e672028706964202428636174207069642929220a2020202020206578697420300a2020202066690a202020203a2022247b706f72743a3f7374617274206e65656473202d2d706f72747d220a20202020636173652022246b696e642220696e0a2020202020206b76207c20617070207c20726f6c65290a202020202020202073657473696420707974686f6e3320222464656d6f222022246b696e64222022244022203e20736572766963652e6c6f6720323e2631203c202f6465762f6e756c6c20260a2020202020202020636865636b3d222d2d75726c20687474703a2f2f24686f73743a24706f72742f6865616c7468220a20202020202020203b3b0a2020202020206c62290a20202020202020205b202d66206261636b656e6473205d207c7c203a203e206261636b656e64730a202020202020202073657473696420707974686f6e3320222464656d6f22206c62202d2d706f7274202224706f727422202d2d6261636b656e64732d66696c652022245057442f6261636b656e647322205c0a202020202020202020203e20736572766963652e6c6f6720323e2631203c202f6465762f6e756c6c20260a2020202020202020636865636b3d222d2d75726c20687474703a2f2f24686f73743a24706f72742f6c622f6865616c7468220a20202020202020203b3b0a2020202020207265646973290a20202020202020206e6565642072656469732d736572766572202272756e20736372697074732f626f6f7473747261702e73682028697420696e7374616c6c732072656469732d73657276657229220a20202020202020206d6b646972202d7020646174610a2020202020202020232050726f746563746564206d6f646520286e6f2070617373776f72643a206c6f6f706261636b20636c69656e7473206f6e6c79292073756974732061206c6f63616c20636c75737465722c0a2020202020202020232077686f7365206e6f64657320616c6c2068617665206c6f6f706261636b206164647265737365732e204120636f6e7461696e657227732061646472657373206973206f6e206974730a20202020202020202320636c75737465722773206f776e206e6574776f726b2c207768696368206f6e6c79207468617420636c75737465722773206e6f6465732028616e642074686520686f7374292072656163682c0a20202020202020202320616e642070726f746563746564206d6f646520776f756c6420726566757365206576656e20746865206e6f646520697473656c662074686572652e0a2020202020202020636173652024686f737420696e203132372e2a292070726f7465637465643d796573203b3b202a292070726f7465637465643d6e6f203b3b20657361630a20202020202020207365747369642072656469732d736572766572202d2d62696e64202224686f737422202d2d706f7274202224706f727422202d2d6469722022245057442f6461746122202d2d73617665202727205c0a202020202020202020202d2d70726f7465637465642d6d6f646520222470726f74656374656422202d2d617070656e646f6e6c79206e6f202d2d6461656d6f6e697a65206e6f205c0a202020202020202020203e20736572766963652e6c6f6720323e2631203c202f6465762f6e756c6c20260a2020202020202020636865636b3d222d2d706f72742024706f7274202d2d73656e642050494e475c5c725c5c6e202d2d657870656374202b504f4e47220a20202020202020203b3b0a2020202020206d656d636163686564290a20202020202020206e656564206d656d636163686564202272756e20736372697074732f626f6f7473747261702e73682028697420696e7374616c6c73206d656d63616368656429220a2020202020202020757365723d22220a202020202020202023204e6576657220617320726f6f743a2061206e6f64652072756e6e696e6720617320726f6f742028616e206f6c64206c6f63616c206e6f646529206861732069742064726f7020746f206e6f626f64792e0a20202020202020205b202224286964202d752922203d2030205d20262620757365723d222d75206e6f626f6479220a202020202020202023207368656c6c636865636b2064697361626c653d5343323038360a2020202020202020736574736964206d656d636163686564202d6c202224686f737422202d70202224706f727422202d552030202d6d203332202475736572203e20736572766963652e6c6f6720323e2631203c202f6465762f6e756c6c20260a2020202020202020636865636b3d222d2d706f72742024706f7274202d2d73656e642076657273696f6e5c5c725c5c6e202d2d6578706563742056455253494f4e220a20202020202020203b3b0a2020202020202a290a20202020202020206563686f2022756e6b6e6f776e206b696e6420246b696e6422203e26320a20202020202020206578697420320a20202020202020203b3b0a20202020657361630a202020206563686f202421203e207069640a2020202023207368656c6c636865636b2064697361626c653d5343323038360a202020206966202120707974686f6e3320222464656d6f222070726f62652024636865636b202d2d74696d656f75742032303b207468656e0a2020202020206563686f2022246b696e6420646964206e6f74206265636f6d65206865616c746879206f6e2024686f73743a24706f72743b20697473206c6f673a22203e26320a2020202020207461696c202d6e20333020736572766963652e6c6f67203e2632207c7c20747275650a20202020202073746f700a2020202020206578697420310a2020202066690a202020206563686f2022246b696e6420616e73776572696e67206f6e2024686f73743a24706f72742028706964202428636174207069642929220a202020203b3b0a202070726f6265290a202020202320546865206d6f6e69746f722773206865616c746820636865636b3a2077686574686572207468652072756e6e696e67207365727669636520616e7377657273207269676874206e6f772e0a202020203a2022247b706f72743a3f70726f6265206e65656473202d2d706f72747d220a20202020636173652022246b696e642220696e0a20202020202072656469732920636865636b3d222d2d706f72742024706f7274202d2d73656e642050494e475c5c725c5c6e202d2d657870656374202b504f4e4722203b3b0a2020202020206d656d6361636865642920636865636b3d222d2d706f72742024706f7274202d2d73656e642076657273696f6e5c5c725c5c6e202d2d6578706563742056455253494f4e22203b3b0a2020202020206c622920636865636b3d222d2d75726c20687474703a2f2f24686f73743a24706f72742f6c622f6865616c746822203b3b0a2020202020202a2920636865636b3d222d2d75726c20687474703a2f2f24686f73743a24706f72742f6865616c746822203b3b0a20202020657361630a2020202023207368656c6c636865636b2064697361626c653d5343323038360a202020206578656320707974686f6e3320222464656d6f222070726f62652024636865636b202d2d74696d656f757420330a202020203b3b0a202073746f70290a2020202073746f700a202020206563686f2022246b696e642073746f70706564206f6e2024686f7374220a202020203b3b0a202072656d6f7665290a2020202073746f700a20202020726d202d72662064617461206261636b656e64732072656c6561736520736572766963652e6c6f670a202020206563686f2022246b696e642072656d6f7665642066726f6d2024686f7374220a202020203b3b0a20202a290a202020206563686f2022756e6b6e6f776e20616374696f6e2024616374696f6e3a2075736520696e7374616c6c2c20636f6e6669677572652c2073746172742c2070726f62652c2073746f70206f722072656d6f766522203e26320a202020206578697420320a202020203b3b0a657361630a');
INSERT INTO public.plugin_resource_blobs VALUES ('00000000-0000-0000-0000-000000000001', 'scripts', 'corral-demo.py', 1, '\x23212f7573722f62696e2f656e7620707974686f6e330a222222436f7272616c27732064656d6f2073657276696365733a20736d616c6c2c207265616c2073657276657273206f6e20707974686f6e332773207374616e64617264206c696272617279206f6e6c792e0a0a20206b7620202020616e2048545450206b65792d76616c75652073746f72653b2077697468202d2d6c6561646572206974206973206120666f6c6c6f776572207468617420636f70696573207468650a20202020202020206c65616465722773206c6f6720616e6420666f7277617264732077726974657320746f20697420286b762d636c75737465722773207265706c69636174696f6e290a2020617070202020612077656220617070207468617420636f756e74732076697369747320696e206b7620616e642073617973207768696368206e6f6465207365727665642074686520706167650a20202020202020202877697468206e6f202d2d6b762069742073657276657320776974686f7574206120636f756e7465723a2070616173277320444541207374616e642d696e290a20206c62202020206120726f756e642d726f62696e20485454502070726f787920746f20746865206261636b656e6473206c697374656420696e20612066696c652c2072652d72656164206f6e206368616e67650a2020202020202020736f2061207265636f6e66696775726520616674657220616464696e67206e6f646573206e65656473206e6f20726573746172740a2020726f6c65202061207374616e642d696e20666f72206120726f6c652044656269616e2063616e6e6f742072756e20756e70726976696c6567656420686572653a206f6e652070726f6365737320746861740a2020202020202020616e7377657273204854545020776974682069747320726f6c6520616e642074686520726561736f6e2069742069732061207374616e642d696e0a202070726f6265207761697420756e74696c20612055524c20616e73776572732032303020286f7220612054435020706f727420616e73776572732061206772656574696e67290a0a4576657279207365727665722062696e647320746865206e6f64652773206f776e206c6f6f706261636b206164647265737320616e6420616e737765727320474554202f6865616c74682e0a2222220a0a696d706f72742061726770617273650a696d706f727420687474702e7365727665720a696d706f7274206a736f6e0a696d706f7274206f730a696d706f727420736f636b65740a696d706f7274207379730a696d706f727420746872656164696e670a696d706f72742074696d650a696d706f72742075726c6c69622e6572726f720a696d706f72742075726c6c69622e726571756573740a0a2320536d616c6c2074687265616420737461636b733a2068617264776172652074797065732063617020656163682070726f63657373277320616464726573732073706163652028756c696d6974202d76292c0a2320616e64207468652064656661756c742038204d69422070657220726571756573742074687265616420776f756c642065786861757374206120736d616c6c206e6f646527732063617020717569636b6c792e0a746872656164696e672e737461636b5f73697a6528353132202a2031303234290a0a4e4f4445203d206f732e656e7669726f6e2e6765742822434f5252414c5f4e4f4445222c20223f22290a484f5354203d206f732e656e7669726f6e2e6765742822434f5252414c5f484f5354222c20223132372e302e302e3122290a434c5553544552203d206f732e656e7669726f6e2e6765742822434f5252414c5f434c55535445525f4e414d45222c20223f22290a0a0a636c6173732048616e646c657228687474702e7365727665722e42617365485454505265717565737448616e646c6572293a0a20202020222222526f7574657320746f207468652073657276657227732060726f7574657360207461626c653b20616e7377657273204a534f4e206f7220746578742e2222220a0a2020202070726f746f636f6c5f76657273696f6e203d2022485454502f312e31220a0a20202020646566206c6f675f6d6573736167652873656c662c20666f726d61742c202a61726773293a202023206e6f71613a20413030322028746865206261736520636c6173732773206e616d65290a20202020202020207379732e7374646572722e7772697465282225732025735c6e222025202873656c662e616464726573735f737472696e6728292c20666f726d61742025206172677329290a0a20202020646566207265706c792873656c662c207374617475732c20626f64792c20636f6e74656e745f747970653d226170706c69636174696f6e2f6a736f6e222c20686561646572733d2829293a0a20202020202020206966206e6f74206973696e7374616e636528626f64792c202862797465732c2073747229293a0a202020202020202020202020626f6479203d206a736f6e2e64756d707328626f647929202b20225c6e220a20202020202020206966206973696e7374616e636528626f64792c20737472293a0a202020202020202020202020626f6479203d20626f64792e656e636f646528290a202020202020202073656c662e73656e645f726573706f6e736528737461747573290a202020202020202073656c662e73656e645f6865616465722822436f6e74656e742d54797065222c20636f6e74656e745f74797065290a202020202020202073656c662e73656e645f6865616465722822436f6e74656e742d4c656e677468222c20737472286c656e28626f64792929290a2020202020202020666f72206e616d652c2076616c756520696e20686561646572733a0a20202020202020202020202073656c662e73656e645f686561646572286e616d652c2076616c7565290a202020202020202073656c662e656e645f6865616465727328290a202020202020202069662073656c662e636f6d6d616e6420213d202248454144223a0a20202020202020202020202073656c662e7766696c652e777269746528626f6479290a0a2020202064656620626f64792873656c66293a0a20202020202020206c656e677468203d20696e742873656c662e686561646572732e6765742822436f6e74656e742d4c656e6774682229206f722030290a202020202020202072657475726e2073656c662e7266696c652e72656164286c656e67746829206966206c656e67746820656c7365206222220a0a202020206465662064697370617463682873656c66293a0a20202020202020207472793a0a20202020202020202020202073656c662e7365727665722e6170702e68616e646c652873656c66290a202020202020202065786365707420457863657074696f6e206173206572726f723a20202320612064656d6f20736572766572207265706f7274732c20697420646f6573206e6f74206469650a20202020202020202020202073656c662e7265706c79283530302c207b226572726f72223a20737472286572726f72297d290a0a20202020646f5f474554203d20646f5f505554203d20646f5f504f5354203d20646f5f44454c455445203d20646f5f48454144203d2064697370617463680a0a0a646566207365727665286170702c20706f7274293a0a20202020736572766572203d20687474702e7365727665722e546872656164696e67485454505365727665722828484f53542c20706f7274292c2048616e646c6572290a202020207365727665722e6461656d6f6e5f74687265616473203d20547275650a202020207365727665722e617070203d206170700a202020207072696e7428222573206c697374656e696e67206f6e20687474703a2f2f25733a25642f22202520287479706528617070292e5f5f6e616d655f5f2c20484f53542c20706f7274292c20666c7573683d54727565290a202020207365727665722e73657276655f666f726576657228290a0a0a64656620687474705f63616c6c286d6574686f642c2075726c2c20646174613d4e6f6e652c2074696d656f75743d322e30293a0a2020202072657175657374203d2075726c6c69622e726571756573742e526571756573742875726c2c20646174613d646174612c206d6574686f643d6d6574686f64290a20202020776974682075726c6c69622e726571756573742e75726c6f70656e28726571756573742c2074696d656f75743d74696d656f75742920617320726573706f6e73653a0a202020202020202072657475726e20726573706f6e73652e7374617475732c20726573706f6e73652e7265616428290a0a0a636c617373204b763a0a202020202222224c65616465723a206b6565707320746865206461746120616e6420616e20617070656e642d6f6e6c79206c6f672e20466f6c6c6f7765723a20706f6c6c7320746865206c65616465722773206c6f672e2222220a0a20202020646566205f5f696e69745f5f2873656c662c20706f72742c206c6561646572293a0a202020202020202073656c662e6c6f636b203d20746872656164696e672e4c6f636b28290a202020202020202073656c662e64617461203d207b7d0a202020202020202073656c662e6c6f67203d205b5d20202320287365712c206b65792c2076616c7565206f72204e6f6e65290a202020202020202073656c662e6c6561646572203d202225733a256422202520286c65616465722c20706f727429206966206c656164657220616e64206c656164657220213d20484f535420656c7365204e6f6e650a202020202020202073656c662e73796e636564203d2073656c662e6c6561646572206973204e6f6e650a202020202020202069662073656c662e6c65616465723a0a202020202020202020202020746872656164696e672e546872656164287461726765743d73656c662e666f6c6c6f772c206461656d6f6e3d54727565292e737461727428290a0a2020202064656620666f6c6c6f772873656c66293a0a20202020202020207768696c6520547275653a0a2020202020202020202020207472793a0a2020202020202020202020202020202073696e6365203d2073656c662e6c6f675b2d315d5b305d2069662073656c662e6c6f6720656c736520300a202020202020202020202020202020205f2c20726177203d20687474705f63616c6c2822474554222c2022687474703a2f2f25732f6c6f673f73696e63653d2564222025202873656c662e6c65616465722c2073696e636529290a20202020202020202020202020202020776974682073656c662e6c6f636b3a0a2020202020202020202020202020202020202020666f72207365712c206b65792c2076616c756520696e206a736f6e2e6c6f61647328726177295b226f7073225d3a0a20202020202020202020202020202020202020202020202073656c662e6170706c79287365712c206b65792c2076616c7565290a2020202020202020202020202020202073656c662e73796e636564203d20547275650a20202020202020202020202065786365707420284f534572726f722c2056616c75654572726f7229206173206572726f723a0a202020202020202020202020202020207379732e7374646572722e77726974652822666f6c6c6f77696e672025733a2025735c6e222025202873656c662e6c65616465722c206572726f7229290a20202020202020202020202074696d652e736c65657028302e32290a0a20202020646566206170706c792873656c662c207365712c206b65792c2076616c7565293a0a202020202020202073656c662e6c6f672e617070656e6428287365712c206b65792c2076616c756529290a202020202020202069662076616c7565206973204e6f6e653a0a20202020202020202020202073656c662e646174612e706f70286b65792c204e6f6e65290a2020202020202020656c73653a0a20202020202020202020202073656c662e646174615b6b65795d203d2076616c75650a0a202020206465662077726974652873656c662c206b65792c2076616c7565293a0a2020202020202020776974682073656c662e6c6f636b3a0a202020202020202020202020736571203d2073656c662e6c6f675b2d315d5b305d202b20312069662073656c662e6c6f6720656c736520310a20202020202020202020202073656c662e6170706c79287365712c206b65792c2076616c7565290a20202020202020202020202072657475726e207365710a0a202020206465662068616e646c652873656c662c20726571293a0a202020202020202070617468203d207265712e706174682e73706c697428223f22295b305d0a202020202020202069662070617468203d3d20222f6865616c7468223a0a2020202020202020202020206f6b203d2073656c662e73796e6365640a20202020202020202020202072657475726e207265712e7265706c7928323030206966206f6b20656c7365203530332c207b0a202020202020202020202020202020202273657276696365223a20226b76222c20226e6f6465223a204e4f44452c2022636c7573746572223a20434c55535445522c20226f6b223a206f6b2c0a2020202020202020202020202020202022726f6c65223a2022666f6c6c6f776572222069662073656c662e6c656164657220656c736520226c6561646572222c20226c6561646572223a2073656c662e6c65616465722c0a20202020202020202020202020202020226b657973223a206c656e2873656c662e64617461292c2022736571223a2073656c662e6c6f675b2d315d5b305d2069662073656c662e6c6f6720656c736520307d290a202020202020202069662070617468203d3d20222f6c6f672220616e64206e6f742073656c662e6c65616465723a0a20202020202020202020202073696e6365203d20696e74287265712e706174682e706172746974696f6e282273696e63653d22295b325d206f722030290a202020202020202020202020776974682073656c662e6c6f636b3a0a202020202020202020202020202020206f7073203d205b6f7020666f72206f7020696e2073656c662e6c6f67206966206f705b305d203e2073696e63655d0a20202020202020202020202072657475726e207265712e7265706c79283230302c207b226f7073223a206f70737d290a2020202020202020696620706174682e7374617274737769746828222f696e63722f222920616e64206c656e287061746829203e20363a0a20202020202020202020202072657475726e2073656c662e696e6372287265712c20706174685b363a5d290a20202020202020206966206e6f7420706174682e7374617274737769746828222f6b762f2229206f72206c656e287061746829203c3d20343a0a20202020202020202020202072657475726e207265712e7265706c79283430342c207b226572726f72223a2022757365202f6b762f4b45592c202f696e63722f4b4559206f72202f6865616c7468227d290a20202020202020206b6579203d20706174685b343a5d0a20202020202020206966207265712e636f6d6d616e6420696e202822474554222c20224845414422293a0a20202020202020202020202076616c7565203d2073656c662e646174612e676574286b6579290a20202020202020202020202072657475726e207265712e7265706c79283430342c207b226572726f72223a20226e6f206b6579202573222025206b65797d292069662076616c7565206973204e6f6e65205c0a20202020202020202020202020202020656c7365207265712e7265706c79283230302c2076616c75652c2022746578742f706c61696e22290a202020202020202069662073656c662e6c65616465723a0a20202020202020202020202072657475726e2073656c662e666f727761726428726571290a20202020202020206966207265712e636f6d6d616e64203d3d2022505554223a0a202020202020202020202020736571203d2073656c662e7772697465286b65792c207265712e626f647928292e6465636f64652829290a20202020202020202020202072657475726e207265712e7265706c79283230302c207b226b6579223a206b65792c2022736571223a207365717d290a20202020202020206966207265712e636f6d6d616e64203d3d202244454c455445223a0a202020202020202020202020736571203d2073656c662e7772697465286b65792c204e6f6e65290a20202020202020202020202072657475726e207265712e7265706c79283230302c207b226b6579223a206b65792c2022736571223a207365717d290a202020202020202072657475726e207265712e7265706c79283430352c207b226572726f72223a20224745542c20505554206f722044454c455445227d290a0a2020202064656620696e63722873656c662c207265712c206b6579293a0a202020202020202069662073656c662e6c65616465723a0a20202020202020202020202072657475726e2073656c662e666f727761726428726571290a2020202020202020776974682073656c662e6c6f636b3a0a20202020202020202020202076616c7565203d20696e742873656c662e646174612e676574286b657929206f72203029202b20310a202020202020202020202020736571203d2073656c662e6c6f675b2d315d5b305d202b20312069662073656c662e6c6f6720656c736520310a20202020202020202020202073656c662e6170706c79287365712c206b65792c207374722876616c756529290a202020202020202072657475726e207265712e7265706c79283230302c207b226b6579223a206b65792c202276616c7565223a2076616c75652c2022736571223a207365717d290a0a2020202064656620666f72776172642873656c662c20726571293a0a20202020202020207472793a0a2020202020202020202020207374617475732c20726177203d20687474705f63616c6c287265712e636f6d6d616e642c2022687474703a2f2f25732573222025202873656c662e6c65616465722c207265712e70617468292c0a2020202020202020202020202020202020202020202020202020202020202020202020207265712e626f64792829206966207265712e636f6d6d616e6420696e202822505554222c2022504f5354222920656c7365204e6f6e65290a20202020202020206578636570742075726c6c69622e6572726f722e485454504572726f72206173206572726f723a0a2020202020202020202020207374617475732c20726177203d206572726f722e636f64652c206572726f722e7265616428290a202020202020202072657475726e207265712e7265706c79287374617475732c20726177290a0a0a636c617373204170703a0a202020202222225468652077656220746965723a20612070616765206e616d696e6720697473206e6f64652c2077697468206120766973697420636f756e746572206b65707420696e206b762e2222220a0a20202020646566205f5f696e69745f5f2873656c662c206b765f686f7374732c206b765f706f72742c207469746c65293a0a202020202020202073656c662e6b76203d205b2225733a25642220252028686f73742c206b765f706f72742920666f7220686f737420696e206b765f686f73747320696620686f73745d0a202020202020202073656c662e7469746c65203d207469746c650a20202020202020202320576861742060696e7374616c6c202d2d72656c65617365602077726f746520696e746f2074686520736572766963652773206469726563746f7279202874686520776f726b696e670a202020202020202023206469726563746f7279293a2077686963682072656c65617365206f6620746865206170702074686973206e6f6465207365727665732e0a20202020202020207472793a0a20202020202020202020202077697468206f70656e282272656c65617365222920617320746578743a0a2020202020202020202020202020202073656c662e72656c65617365203d20746578742e7265616428292e73747269702829206f72202231220a2020202020202020657863657074204f534572726f723a0a20202020202020202020202073656c662e72656c65617365203d202231220a0a202020206465662068616e646c652873656c662c20726571293a0a202020202020202070617468203d207265712e706174682e73706c697428223f22295b305d0a202020202020202069662070617468203d3d20222f6865616c7468223a0a20202020202020202020202070726f626c656d203d2073656c662e6b765f70726f626c656d28290a20202020202020202020202072657475726e207265712e7265706c79283530332069662070726f626c656d20656c7365203230302c207b0a202020202020202020202020202020202273657276696365223a2073656c662e7469746c652c20226e6f6465223a204e4f44452c20226f6b223a206e6f742070726f626c656d2c20226b76223a2073656c662e6b762c0a202020202020202020202020202020202272656c65617365223a2073656c662e72656c656173652c202270726f626c656d223a2070726f626c656d7d290a20202020202020206966207061746820213d20222f223a0a20202020202020202020202072657475726e207265712e7265706c79283430342c207b226572726f72223a20226e6f207061676520257322202520706174687d290a2020202020202020766973697473203d20226e6f20636f756e746572202874686973207469657220686173206e6f206b7629220a202020202020202069662073656c662e6b763a0a2020202020202020202020207472793a0a202020202020202020202020202020205f2c20726177203d20687474705f63616c6c2822504f5354222c2022687474703a2f2f25732f696e63722f7669736974732220252073656c662e6b765b305d2c20622222290a20202020202020202020202020202020766973697473203d206a736f6e2e6c6f61647328726177295b2276616c7565225d0a20202020202020202020202065786365707420284f534572726f722c2056616c75654572726f7229206173206572726f723a0a2020202020202020202020202020202072657475726e207265712e7265706c79283530332c20226b7620756e726561636861626c653a2025735c6e222025206572726f722c2022746578742f706c61696e22290a202020202020202070616765203d2028223c21646f63747970652068746d6c3e3c7469746c653e25733c2f7469746c653e3c68313e2573206f6e20636c75737465722025733c2f68313e220a20202020202020202020202020202020223c703e72656c656173652025732c20736572766564206279206e6f646520257320282573293b207669736974733a2025733c2f703e5c6e220a2020202020202020202020202020202025202873656c662e7469746c652c2073656c662e7469746c652c20434c55535445522c2073656c662e72656c656173652c204e4f44452c20484f53542c2076697369747329290a202020202020202072657475726e207265712e7265706c79283230302c20706167652c2022746578742f68746d6c222c0a202020202020202020202020202020202020202020202020205b2822582d436f7272616c2d4e6f6465222c204e4f4445292c202822582d436f7272616c2d52656c65617365222c2073656c662e72656c65617365295d290a0a20202020646566206b765f70726f626c656d2873656c66293a0a2020202020202020666f72206164647265737320696e2073656c662e6b765b3a315d3a0a2020202020202020202020207472793a0a20202020202020202020202020202020687474705f63616c6c2822474554222c2022687474703a2f2f25732f6865616c74682220252061646472657373290a202020202020202020202020657863657074204f534572726f72206173206572726f723a0a2020202020202020202020202020202072657475726e20226b762025733a2025732220252028616464726573732c206572726f72290a202020202020202072657475726e204e6f6e650a0a0a636c617373204c623a0a20202020222222526f756e6420726f62696e206f76657220746865206261636b656e64732066696c653b2061206261636b656e642074686174207265667573657320697320736b69707065642e2222220a0a20202020646566205f5f696e69745f5f2873656c662c206261636b656e64735f66696c65293a0a202020202020202073656c662e66696c65203d206261636b656e64735f66696c650a202020202020202073656c662e6d74696d65203d204e6f6e650a202020202020202073656c662e6261636b656e6473203d205b5d0a202020202020202073656c662e6e657874203d20300a202020202020202073656c662e6c6f636b203d20746872656164696e672e4c6f636b28290a0a202020206465662063757272656e742873656c66293a0a2020202020202020776974682073656c662e6c6f636b3a0a2020202020202020202020206d74696d65203d206f732e737461742873656c662e66696c65292e73745f6d74696d655f6e730a2020202020202020202020206966206d74696d6520213d2073656c662e6d74696d653a0a2020202020202020202020202020202077697468206f70656e2873656c662e66696c6529206173206c696e65733a0a202020202020202020202020202020202020202073656c662e6261636b656e6473203d205b6c696e652e7374726970282920666f72206c696e6520696e206c696e6573206966206c696e652e737472697028295d0a2020202020202020202020202020202073656c662e6d74696d65203d206d74696d650a2020202020202020202020207374617274203d2073656c662e6e6578740a20202020202020202020202073656c662e6e657874202b3d20310a20202020202020202020202072657475726e205b73656c662e6261636b656e64735b287374617274202b2069292025206c656e2873656c662e6261636b656e6473295d0a2020202020202020202020202020202020202020666f72206920696e2072616e6765286c656e2873656c662e6261636b656e647329295d0a0a202020206465662068616e646c652873656c662c20726571293a0a20202020202020206261636b656e6473203d2073656c662e63757272656e7428290a20202020202020206966207265712e706174682e73706c697428223f22295b305d203d3d20222f6c622f6865616c7468223a0a20202020202020202020202072657475726e207265712e7265706c7928323030206966206261636b656e647320656c7365203530332c207b0a202020202020202020202020202020202273657276696365223a20226c62222c20226e6f6465223a204e4f44452c20226f6b223a20626f6f6c286261636b656e6473292c20226261636b656e6473223a206261636b656e64737d290a2020202020202020626f6479203d207265712e626f64792829206966207265712e636f6d6d616e6420696e202822505554222c2022504f5354222920656c7365204e6f6e650a20202020202020206c617374203d20226e6f206261636b656e647320636f6e66696775726564220a2020202020202020666f72206261636b656e6420696e206261636b656e64733a0a2020202020202020202020207472793a0a202020202020202020202020202020207374617475732c20726177203d20687474705f63616c6c287265712e636f6d6d616e642c2022687474703a2f2f2573257322202520286261636b656e642c207265712e70617468292c20626f6479290a2020202020202020202020206578636570742075726c6c69622e6572726f722e485454504572726f72206173206572726f723a0a202020202020202020202020202020207374617475732c20726177203d206572726f722e636f64652c206572726f722e7265616428290a202020202020202020202020657863657074204f534572726f72206173206572726f723a0a202020202020202020202020202020206c617374203d202225733a20257322202520286261636b656e642c206572726f72290a20202020202020202020202020202020636f6e74696e75650a20202020202020202020202072657475726e207265712e7265706c79287374617475732c207261772c2022746578742f68746d6c222c205b2822582d436f7272616c2d4261636b656e64222c206261636b656e64295d290a202020202020202072657475726e207265712e7265706c79283530322c207b226572726f72223a20226e6f206261636b656e6420616e737765726564222c20226c617374223a206c6173747d290a0a0a636c61737320526f6c653a0a2020202022222241207374616e642d696e20726f6c653a2069742072756e7320616e6420616e73776572732c20616e6420736179732077686174206974207374616e647320696e20666f722e2222220a0a20202020646566205f5f696e69745f5f2873656c662c206e616d652c206e6f7465293a0a202020202020202073656c662e6e616d65203d206e616d650a202020202020202073656c662e6e6f7465203d206e6f74650a0a202020206465662068616e646c652873656c662c20726571293a0a202020202020202072657475726e207265712e7265706c79283230302c207b22726f6c65223a2073656c662e6e616d652c20226e6f6465223a204e4f44452c2022636c7573746572223a20434c55535445522c0a20202020202020202020202020202020202020202020202020202020202020226f6b223a20547275652c20227374616e64696e223a20626f6f6c2873656c662e6e6f7465292c20226e6f7465223a2073656c662e6e6f74657d290a0a0a6465662070726f62652861726773293a0a20202020222222506f6c6c7320756e74696c207468652074617267657420616e73776572733b20657869742031207769746820746865206c617374206572726f72206166746572207468652074696d656f75742e2222220a20202020646561646c696e65203d2074696d652e6d6f6e6f746f6e69632829202b20617267732e74696d656f75740a202020206c617374203d204e6f6e650a202020207768696c652074696d652e6d6f6e6f746f6e69632829203c20646561646c696e653a0a20202020202020207472793a0a202020202020202020202020696620617267732e75726c3a0a202020202020202020202020202020207374617475732c205f203d20687474705f63616c6c2822474554222c20617267732e75726c2c2074696d656f75743d312e30290a20202020202020202020202020202020696620737461747573203d3d203230303a0a202020202020202020202020202020202020202072657475726e20300a202020202020202020202020202020206c617374203d2022737461747573202564222025207374617475730a202020202020202020202020656c73653a0a202020202020202020202020202020207769746820736f636b65742e6372656174655f636f6e6e656374696f6e2828617267732e686f73742c20617267732e706f7274292c2074696d656f75743d312e302920617320636f6e6e3a0a2020202020202020202020202020202020202020636f6e6e2e73656e64616c6c28617267732e73656e642e656e636f646528292e6465636f64652822756e69636f64655f65736361706522292e656e636f64652829290a2020202020202020202020202020202020202020616e73776572203d20636f6e6e2e7265637628323536292e6465636f6465286572726f72733d227265706c61636522290a2020202020202020202020202020202020202020696620616e737765722e7374617274737769746828617267732e657870656374293a0a20202020202020202020202020202020202020202020202072657475726e20300a20202020202020202020202020202020202020206c617374203d2022616e73776572656420257222202520616e737765720a20202020202020206578636570742075726c6c69622e6572726f722e485454504572726f72206173206572726f723a0a2020202020202020202020206c617374203d2022737461747573202564222025206572726f722e636f64650a2020202020202020657863657074204f534572726f72206173206572726f723a0a2020202020202020202020206c617374203d20737472286572726f72290a202020202020202074696d652e736c65657028302e31290a202020207072696e7428226e6f20616e737765722066726f6d202573206166746572202573733a202573220a20202020202020202020252028617267732e75726c206f72202225733a25642220252028617267732e686f73742c20617267732e706f7274292c20617267732e74696d656f75742c206c617374292c2066696c653d7379732e737464657272290a2020202072657475726e20310a0a0a646566206d61696e28293a0a20202020706172736572203d2061726770617273652e417267756d656e74506172736572286465736372697074696f6e3d5f5f646f635f5f2e73706c697428225c6e22295b305d290a20202020636f6d6d616e6473203d207061727365722e6164645f7375627061727365727328646573743d22636f6d6d616e64222c2072657175697265643d54727565290a202020206b76203d20636f6d6d616e64732e6164645f70617273657228226b7622290a202020206b762e6164645f617267756d656e7428222d2d706f7274222c20747970653d696e742c2072657175697265643d54727565290a202020206b762e6164645f617267756d656e7428222d2d6c6561646572222c2064656661756c743d2222290a20202020617070203d20636f6d6d616e64732e6164645f706172736572282261707022290a202020206170702e6164645f617267756d656e7428222d2d706f7274222c20747970653d696e742c2072657175697265643d54727565290a202020206170702e6164645f617267756d656e7428222d2d6b76222c2064656661756c743d2222290a202020206170702e6164645f617267756d656e7428222d2d6b762d706f7274222c20747970653d696e742c2064656661756c743d37303730290a202020206170702e6164645f617267756d656e7428222d2d7469746c65222c2064656661756c743d2261707022290a202020206c62203d20636f6d6d616e64732e6164645f70617273657228226c6222290a202020206c622e6164645f617267756d656e7428222d2d706f7274222c20747970653d696e742c2072657175697265643d54727565290a202020206c622e6164645f617267756d656e7428222d2d6261636b656e64732d66696c65222c2072657175697265643d54727565290a20202020726f6c65203d20636f6d6d616e64732e6164645f7061727365722822726f6c6522290a20202020726f6c652e6164645f617267756d656e7428222d2d706f7274222c20747970653d696e742c2072657175697265643d54727565290a20202020726f6c652e6164645f617267756d656e7428222d2d6e616d65222c2072657175697265643d54727565290a20202020726f6c652e6164645f617267756d656e7428222d2d6e6f7465222c2064656661756c743d2222290a20202020636865636b203d20636f6d6d616e64732e6164645f706172736572282270726f626522290a20202020636865636b2e6164645f617267756d656e7428222d2d75726c22290a20202020636865636b2e6164645f617267756d656e7428222d2d686f7374222c2064656661756c743d484f5354290a20202020636865636b2e6164645f617267756d656e7428222d2d706f7274222c20747970653d696e74290a20202020636865636b2e6164645f617267756d656e7428222d2d73656e64222c2064656661756c743d2222290a20202020636865636b2e6164645f617267756d656e7428222d2d657870656374222c2064656661756c743d2222290a20202020636865636b2e6164645f617267756d656e7428222d2d74696d656f7574222c20747970653d666c6f61742c2064656661756c743d3230290a2020202061726773203d207061727365722e70617273655f6172677328290a20202020696620617267732e636f6d6d616e64203d3d202270726f6265223a0a202020202020202072657475726e2070726f62652861726773290a20202020696620617267732e636f6d6d616e64203d3d20226b76223a0a20202020202020207365727665284b7628617267732e706f72742c20617267732e6c65616465722e73706c697428222c22295b305d292c20617267732e706f7274290a20202020656c696620617267732e636f6d6d616e64203d3d2022617070223a0a202020202020202073657276652841707028617267732e6b762e73706c697428222c22292c20617267732e6b765f706f72742c20617267732e7469746c65292c20617267732e706f7274290a20202020656c696620617267732e636f6d6d616e64203d3d20226c62223a0a20202020202020207365727665284c6228617267732e6261636b656e64735f66696c65292c20617267732e706f7274290a20202020656c73653a0a2020202020202020736572766528526f6c6528617267732e6e616d652c20617267732e6e6f7465292c20617267732e706f7274290a2020202072657475726e20300a0a0a6966205f5f6e616d655f5f203d3d20225f5f6d61696e5f5f223a0a202020207379732e65786974286d61696e2829290a');
INSERT INTO public.plugin_resource_blobs VALUES ('00000000-0000-0000-0000-000000000001', 'files', 'kv.yml', 1, '\x23205468652064656d6f2773206b65792d76616c75652073746f726520617320616e20416e7369626c6520706c6179626f6f6b202873657276696365206b762d616e7369626c65293a206f6e6520706c61792c0a2320612074616720706572206c6966656379636c6520616374696f6e2028436f7272616c2072756e732069742077697468202d2d7461677320696e7374616c6c2c2073746172742c2073746f70206f722072656d6f7665292e0a23205468652073657276657220697320636f7272616c2d64656d6f2e70792c20776869636820626f6f74737472617020636f7069656420746f206576657279206e6f64653b20746865206669727374206b76206e6f64650a23206c656164732c20746865206f746865727320666f6c6c6f7720697473206c6f6720286b765f6c6561646572292e0a2d206e616d653a204b65792d76616c75652073746f72650a2020686f7374733a20616c6c0a20206761746865725f66616374733a2066616c73650a2020766172733a0a202020206b765f6469723a20227e2f636f7272616c2f73657276696365732f7b7b20636f7272616c5f73657276696365207d7d220a202020206b765f7365727665723a20227e2f636f7272616c2f7265736f75726365732f736372697074732f636f7272616c2d64656d6f2e7079220a2020656e7669726f6e6d656e743a0a202020202320466577206d616c6c6f63206172656e61733a20656163682072657365727665732061646472657373207370616365207468617420636f756e747320616761696e737420746865206e6f64652773206361702e0a202020204d414c4c4f435f4152454e415f4d41583a202232220a2020202023205768617420636f7272616c2d64656d6f2e70792062696e647320746f20616e64207265706f72747320287368656c6c207374657073206765742074686573652066726f6d20436f7272616c292e0a20202020434f5252414c5f484f53543a20227b7b20636f7272616c5f686f7374207d7d220a20202020434f5252414c5f4e4f44453a20227b7b20636f7272616c5f6e6f6465207d7d220a20202020434f5252414c5f434c55535445525f4e414d453a20227b7b20636f7272616c5f636c75737465725f6e616d65207d7d220a20207461736b733a0a202020202d206e616d653a20436865636b207468617420707974686f6e332069732074686572650a202020202020616e7369626c652e6275696c74696e2e636f6d6d616e643a20707974686f6e33202d2d76657273696f6e0a2020202020206368616e6765645f7768656e3a2066616c73650a202020202020746167733a205b696e7374616c6c5d0a0a202020202d206e616d653a204d616b6520746865206461746120666f6c6465720a202020202020616e7369626c652e6275696c74696e2e66696c653a0a2020202020202020706174683a20227b7b206b765f646972207d7d2f64617461220a202020202020202073746174653a206469726563746f72790a20202020202020206d6f64653a202230373535220a202020202020746167733a205b696e7374616c6c5d0a0a202020202d206e616d653a205772697465207468652073657474696e677320746865207365727665722073746172747320776974680a202020202020616e7369626c652e6275696c74696e2e636f70793a0a2020202020202020646573743a20227b7b206b765f646972207d7d2f6b762e6a736f6e220a2020202020202020636f6e74656e743a20227b7b207b27706f7274273a206b765f706f7274207c20696e742c20276c6561646572273a206b765f6c65616465722c2027686f7374273a20636f7272616c5f686f73747d207c20746f5f6e6963655f6a736f6e207d7d5c6e220a20202020202020206d6f64653a202230363434220a202020202020746167733a205b73746172745d0a0a202020202d206e616d653a205374617274207468652073657276657220756e6c6573732069742072756e730a202020202020616e7369626c652e6275696c74696e2e7368656c6c3a207c0a20202020202020206364207b7b206b765f646972207d7d0a20202020202020206966205b202d6620706964205d202626206b696c6c202d302022242863617420706964292220323e2f6465762f6e756c6c3b207468656e206563686f20226b7620616c72656164792072756e6e696e67223b206578697420303b2066690a202020202020202073657473696420707974686f6e33207b7b206b765f736572766572207d7d206b76202d2d706f7274207b7b206b765f706f7274207c20696e74207d7d202d2d6c6561646572207b7b206b765f6c6561646572207c2071756f7465207d7d205c0a202020202020202020203e20736572766963652e6c6f6720323e2631203c202f6465762f6e756c6c20260a20202020202020206563686f202421203e207069640a20202020202020206563686f20226b762073746172746564202870696420242129220a202020202020617267733a0a202020202020202065786563757461626c653a202f62696e2f626173680a20202020202072656769737465723a20737461727465640a2020202020206368616e6765645f7768656e3a202227616c72656164792072756e6e696e6727206e6f7420696e20737461727465642e7374646f7574220a202020202020746167733a205b73746172745d0a0a202020202d206e616d653a205761697420756e74696c20697420616e73776572730a202020202020616e7369626c652e6275696c74696e2e7368656c6c3a203e0a2020202020202020707974686f6e33207b7b206b765f736572766572207d7d2070726f6265202d2d74696d656f7574203230202d2d75726c20687474703a2f2f7b7b20636f7272616c5f686f7374207d7d3a7b7b206b765f706f7274207c20696e74207d7d2f6865616c74680a2020202020206368616e6765645f7768656e3a2066616c73650a202020202020746167733a205b73746172745d0a0a202020202d206e616d653a2053746f7020746865207365727665720a202020202020616e7369626c652e6275696c74696e2e7368656c6c3a207c0a20202020202020206364207b7b206b765f646972207d7d20323e2f6465762f6e756c6c207c7c206578697420300a20202020202020205b202d6620706964205d207c7c206578697420300a20202020202020206b696c6c202d5445524d202d2d20222d242863617420706964292220323e2f6465762f6e756c6c207c7c20747275650a2020202020202020726d202d66207069640a202020202020617267733a0a202020202020202065786563757461626c653a202f62696e2f626173680a202020202020746167733a205b73746f705d0a0a202020202d206e616d653a2052656d6f76652069747320646174610a202020202020616e7369626c652e6275696c74696e2e66696c653a0a2020202020202020706174683a20227b7b206b765f646972207d7d220a202020202020202073746174653a20616273656e740a202020202020746167733a205b72656d6f76655d0a');
INSERT INTO public.plugin_resource_blobs VALUES ('00000000-0000-0000-0000-000000000001', 'files', 'lb.pp', 1, '\x23205468652064656d6f2773206c6f61642062616c616e636572206173206120507570706574206d616e6966657374202873657276696365206c622d707570706574292c206f6e65206272616e6368207065720a23206c6966656379636c6520616374696f6e202874686520636f7272616c5f616374696f6e2066616374292e2046616374732066726f6d2074686520636174616c6f673a206c625f706f72742c20616e640a23206c625f6261636b656e64732c20746865206b76206e6f64657320617320686f73743a706f72742028636f6d6d6120736570617261746564292e205468652073657276657220697320636f7272616c2d64656d6f2e70792c0a2320776869636820626f6f74737472617020636f7069656420746f206576657279206e6f64652e0a24646972203d202466616374735b27636f7272616c5f736572766963655f646972275d0a24736572766572203d2022247b6469727d2f2e2e2f2e2e2f7265736f75726365732f736372697074732f636f7272616c2d64656d6f2e7079220a0a63617365202466616374735b27636f7272616c5f616374696f6e275d207b0a202027636f6e666967757265273a207b0a2020202023205468652062616c616e6365722072652d726561647320746869732066696c65207768656e206974206368616e6765733a206e6f2072657374617274206e65656465642e0a2020202066696c65207b2022247b6469727d2f6261636b656e6473223a0a202020202020656e7375726520203d3e2066696c652c0a202020202020636f6e74656e74203d3e2022247b6a6f696e2873706c6974282466616374735b276c625f6261636b656e6473275d2c20272c27292c20225c6e22297d5c6e222c0a2020202020206d6f6465202020203d3e202730363434272c0a202020207d0a20207d0a2020277374617274273a207b0a2020202065786563207b20277374617274207468652062616c616e636572273a0a202020202020636f6d6d616e6420203d3e202273657473696420707974686f6e3320247b7365727665727d206c62202d2d706f727420247b66616374735b276c625f706f7274275d7d202d2d6261636b656e64732d66696c6520247b6469727d2f6261636b656e6473203e20247b6469727d2f736572766963652e6c6f6720323e2631203c202f6465762f6e756c6c2026206563686f205c2421203e20247b6469727d2f70696420262620707974686f6e3320247b7365727665727d2070726f6265202d2d74696d656f7574203230202d2d75726c20687474703a2f2f247b66616374735b27636f7272616c5f686f7374275d7d3a247b66616374735b276c625f706f7274275d7d2f6c622f6865616c7468222c0a202020202020756e6c6573732020203d3e202274657374202d6620247b6469727d2f706964202626206b696c6c202d30205c242863617420247b6469727d2f70696429222c0a20202020202070726f7669646572203d3e207368656c6c2c0a2020202020206377642020202020203d3e20246469722c0a202020202020656e7669726f6e6d656e74203d3e205b274d414c4c4f435f4152454e415f4d41583d32272c2022434f5252414c5f484f53543d247b66616374735b27636f7272616c5f686f7374275d7d222c0a202020202020202022434f5252414c5f4e4f44453d247b66616374735b27636f7272616c5f6e6f6465275d7d222c2022434f5252414c5f434c55535445525f4e414d453d247b66616374735b27636f7272616c5f636c75737465725f6e616d65275d7d225d2c0a202020207d0a20207d0a20202773746f70273a207b0a2020202065786563207b202773746f70207468652062616c616e636572273a0a202020202020636f6d6d616e6420203d3e20226b696c6c202d5445524d202d2d202d5c242863617420247b6469727d2f706964293b20726d202d6620247b6469727d2f706964222c0a2020202020206f6e6c7969662020203d3e202274657374202d6620247b6469727d2f706964222c0a20202020202070726f7669646572203d3e207368656c6c2c0a202020207d0a20207d0a202064656661756c743a207b0a202020206e6f7469636528226c622d70757070657420686173206e6f7468696e6720746f20646f20666f7220247b66616374735b27636f7272616c5f616374696f6e275d7d22290a20207d0a7d0a');


--
-- Data for Name: plugin_resources; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.plugin_resources VALUES ('00000000-0000-0000-0000-000000000001', 'scripts', 'corral-demo.sh', 1, 'f6cc009cd6d19ea5e5798ae7adc2f360070d19130441319cc30b2578cdb87787', 5986, 1, NULL, 1796025856013);
INSERT INTO public.plugin_resources VALUES ('00000000-0000-0000-0000-000000000001', 'scripts', 'corral-demo.py', 1, 'aa515fe64501af00ab1e0d895858b6d29053a8d03e19a2e2fc1a34a8eb440932', 13695, 1, NULL, 1796025856013);
INSERT INTO public.plugin_resources VALUES ('00000000-0000-0000-0000-000000000001', 'files', 'kv.yml', 1, 'b6dd1330d4cbef0a99dfd95b1353b1b267dd7b4c049affb83a8b7b8c87986334', 2583, 1, NULL, 1796025856013);
INSERT INTO public.plugin_resources VALUES ('00000000-0000-0000-0000-000000000001', 'files', 'lb.pp', 1, 'fb290afec332e867c86d096c44bf227f0fbef05d02050722f2eec6c90e5ef842', 1593, 1, NULL, 1796025856013);


--
-- Data for Name: pool_hosts; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: provider_credentials; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.provider_credentials VALUES ('ce7f042a-d903-43b9-9e80-3901b99db51d', 'inhouse', 'sealed:v1:ETJPukUe5phDCHMW9c42JovtxjQLOutLsLxJkDjB5FvWwRQ8WprTcp94IvMGKXs7gRr6FCSG0Je91IJ7e4PetjeONf+h', '["token"]', 'alice', 1796025858118);


--
-- Data for Name: provider_tests; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.provider_tests VALUES ('a038ccab-d953-47fb-a3b9-ce9715815770', 'ce7f042a-d903-43b9-9e80-3901b99db51d', 'inhouse', '{"create":false,"hardwaretype":null,"imagetype":null}', 'done', '26070-c7ef0ce5', '{"provider":"inhouse","providertype":"exec","passed":true,"phases":[{"phase":"check","outcome":"passed","detail":"token accepted; nodes in /root/.corral-test-provider; credentials sha256 53fb4d9772676359501cdedb3dfac5d9a71fc31378eec891ddce35fb091ba8ec","elapsed_ms":316}]}', 1796025858146, 1796025888146, 1796025858150, 1796025858475);


--
-- Data for Name: rollout_clusters; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: rollouts; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: service_health; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: sso_cli_codes; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: sso_identities; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: task_attempts; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.task_attempts VALUES ('21f0a0ba-daeb-4384-aab2-59d4e4772710', '2f872d22-abcd-4bfc-b213-f61ea00d9843', 1, '26070-c7ef0ce5', 'succeeded', 1796025858848, 1796025858987, NULL, '', '', NULL);
INSERT INTO public.task_attempts VALUES ('2d6a3cfa-e351-4f95-96a2-f5205789fbae', '8590014d-b6f7-4d2d-8395-3661a04ad94a', 1, '26070-c7ef0ce5', 'succeeded', 1796025858848, 1796025859023, NULL, '', '', NULL);
INSERT INTO public.task_attempts VALUES ('334a3aa7-68c4-4731-9e1c-5d1fefb283e5', '3d334bbc-cfa6-4757-baf5-856c6b6dc5b8', 1, '26070-c7ef0ce5', 'succeeded', 1796025859032, 1796025859166, NULL, '', '', NULL);
INSERT INTO public.task_attempts VALUES ('4d4bdb8d-f6d8-45f5-aaf2-aa0aff4c8b65', 'b4b1a562-27bd-4876-b2b0-ffd97476a9d6', 1, '26070-c7ef0ce5', 'succeeded', 1796025859078, 1796025859212, NULL, '', '', NULL);
INSERT INTO public.task_attempts VALUES ('9b5edb08-2d64-41af-a3c6-a6214fdca113', '7606e49d-dd22-41e3-910b-b889f8cd212a', 1, '26070-c7ef0ce5', 'succeeded', 1796025859212, 1796025859259, 0, '', 'corral: node ready; 0 plugin resource(s) already current
', NULL);
INSERT INTO public.task_attempts VALUES ('33f5535b-1384-4f75-b9b7-e94ba0bb9b39', '464a4fb4-1649-46d0-9604-071517b7102c', 1, '26070-c7ef0ce5', 'succeeded', 1796025859240, 1796025859269, 0, '', 'corral: node ready; 0 plugin resource(s) already current
', NULL);
INSERT INTO public.task_attempts VALUES ('bf2a52f6-18b7-457c-ae64-81f040f08a7d', 'd757d478-7fa1-4631-940a-a87e590ac6ee', 1, '26070-c7ef0ce5', 'succeeded', 1796025859275, 1796025859296, 0, '', '', NULL);
INSERT INTO public.task_attempts VALUES ('19e72b7c-d964-4c92-a0f0-da36f33623f1', '78de1bef-d32b-4fb9-9ac2-a1abb8e79c79', 1, '26070-c7ef0ce5', 'succeeded', 1796025859286, 1796025859314, 0, '', '', NULL);
INSERT INTO public.task_attempts VALUES ('6eaf1246-d0a0-4639-9820-3ff4cc8f1430', 'dc690e31-1c7f-4dd3-bd42-ede9e6ed8564', 1, '26070-c7ef0ce5', 'succeeded', 1796025859330, 1796025859342, 0, 'base installed on 127.1.0.1
', '', NULL);
INSERT INTO public.task_attempts VALUES ('23931f92-14eb-4b3c-87dc-0a572389679e', '26f43fe5-1852-4bc3-af89-d8d3b7c21bcc', 1, '26070-c7ef0ce5', 'succeeded', 1796025859319, 1796025859355, 0, 'base installed on 127.1.0.2
', '', NULL);
INSERT INTO public.task_attempts VALUES ('5629ae3b-1b8b-4d33-8e82-f511d94a8cc5', 'f4109805-42cc-4271-9b48-c1b75823a025', 1, '26070-c7ef0ce5', 'succeeded', 1796025859357, 1796025859373, 0, 'cluster shop
', '', NULL);
INSERT INTO public.task_attempts VALUES ('70dda5cb-145a-41e1-a660-f9735f837015', '61e55248-34d1-47f8-a56e-e5f8195f3092', 1, '26070-c7ef0ce5', 'succeeded', 1796025859372, 1796025859389, 0, 'cluster shop
', '', NULL);


--
-- Data for Name: task_deps; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.task_deps VALUES ('fa54b9a7-2558-404b-b99d-4f1562f0b819', 0, 2);
INSERT INTO public.task_deps VALUES ('fa54b9a7-2558-404b-b99d-4f1562f0b819', 1, 3);
INSERT INTO public.task_deps VALUES ('fa54b9a7-2558-404b-b99d-4f1562f0b819', 2, 4);
INSERT INTO public.task_deps VALUES ('fa54b9a7-2558-404b-b99d-4f1562f0b819', 3, 5);
INSERT INTO public.task_deps VALUES ('fa54b9a7-2558-404b-b99d-4f1562f0b819', 4, 6);
INSERT INTO public.task_deps VALUES ('fa54b9a7-2558-404b-b99d-4f1562f0b819', 4, 8);
INSERT INTO public.task_deps VALUES ('fa54b9a7-2558-404b-b99d-4f1562f0b819', 5, 7);
INSERT INTO public.task_deps VALUES ('fa54b9a7-2558-404b-b99d-4f1562f0b819', 5, 9);
INSERT INTO public.task_deps VALUES ('fa54b9a7-2558-404b-b99d-4f1562f0b819', 6, 8);
INSERT INTO public.task_deps VALUES ('fa54b9a7-2558-404b-b99d-4f1562f0b819', 6, 10);
INSERT INTO public.task_deps VALUES ('fa54b9a7-2558-404b-b99d-4f1562f0b819', 7, 9);
INSERT INTO public.task_deps VALUES ('fa54b9a7-2558-404b-b99d-4f1562f0b819', 7, 11);
INSERT INTO public.task_deps VALUES ('fa54b9a7-2558-404b-b99d-4f1562f0b819', 8, 10);
INSERT INTO public.task_deps VALUES ('fa54b9a7-2558-404b-b99d-4f1562f0b819', 9, 11);
INSERT INTO public.task_deps VALUES ('e3d2279d-eb6f-4060-ae33-2ca2d3b89230', 0, 1);
INSERT INTO public.task_deps VALUES ('e3d2279d-eb6f-4060-ae33-2ca2d3b89230', 1, 2);
INSERT INTO public.task_deps VALUES ('e3d2279d-eb6f-4060-ae33-2ca2d3b89230', 2, 3);
INSERT INTO public.task_deps VALUES ('e3d2279d-eb6f-4060-ae33-2ca2d3b89230', 2, 4);
INSERT INTO public.task_deps VALUES ('e3d2279d-eb6f-4060-ae33-2ca2d3b89230', 3, 4);
INSERT INTO public.task_deps VALUES ('e3d2279d-eb6f-4060-ae33-2ca2d3b89230', 3, 5);
INSERT INTO public.task_deps VALUES ('e3d2279d-eb6f-4060-ae33-2ca2d3b89230', 4, 5);


--
-- Data for Name: task_events; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.task_events VALUES (1, 'fa54b9a7-2558-404b-b99d-4f1562f0b819', '2f872d22-abcd-4bfc-b213-f61ea00d9843', 1, 1796025858857, 'state', NULL, 'running (attempt 1)');
INSERT INTO public.task_events VALUES (2, 'fa54b9a7-2558-404b-b99d-4f1562f0b819', '8590014d-b6f7-4d2d-8395-3661a04ad94a', 1, 1796025858857, 'state', NULL, 'running (attempt 1)');
INSERT INTO public.task_events VALUES (3, 'fa54b9a7-2558-404b-b99d-4f1562f0b819', '2f872d22-abcd-4bfc-b213-f61ea00d9843', 1, 1796025859003, 'state', NULL, 'succeeded');
INSERT INTO public.task_events VALUES (4, 'fa54b9a7-2558-404b-b99d-4f1562f0b819', '3d334bbc-cfa6-4757-baf5-856c6b6dc5b8', 1, 1796025859035, 'state', NULL, 'running (attempt 1)');
INSERT INTO public.task_events VALUES (5, 'fa54b9a7-2558-404b-b99d-4f1562f0b819', '8590014d-b6f7-4d2d-8395-3661a04ad94a', 1, 1796025859046, 'state', NULL, 'succeeded');
INSERT INTO public.task_events VALUES (6, 'fa54b9a7-2558-404b-b99d-4f1562f0b819', 'b4b1a562-27bd-4876-b2b0-ffd97476a9d6', 1, 1796025859083, 'state', NULL, 'running (attempt 1)');
INSERT INTO public.task_events VALUES (7, 'fa54b9a7-2558-404b-b99d-4f1562f0b819', '3d334bbc-cfa6-4757-baf5-856c6b6dc5b8', 1, 1796025859183, 'state', NULL, 'succeeded');
INSERT INTO public.task_events VALUES (8, 'fa54b9a7-2558-404b-b99d-4f1562f0b819', '7606e49d-dd22-41e3-910b-b889f8cd212a', 1, 1796025859214, 'state', NULL, 'running (attempt 1)');
INSERT INTO public.task_events VALUES (9, 'fa54b9a7-2558-404b-b99d-4f1562f0b819', 'b4b1a562-27bd-4876-b2b0-ffd97476a9d6', 1, 1796025859227, 'state', NULL, 'succeeded');
INSERT INTO public.task_events VALUES (10, 'fa54b9a7-2558-404b-b99d-4f1562f0b819', '464a4fb4-1649-46d0-9604-071517b7102c', 1, 1796025859241, 'state', NULL, 'running (attempt 1)');
INSERT INTO public.task_events VALUES (11, 'fa54b9a7-2558-404b-b99d-4f1562f0b819', '7606e49d-dd22-41e3-910b-b889f8cd212a', 1, 1796025859255, 'output', 'notice', 'corral: node ready; 0 plugin resource(s) already current
');
INSERT INTO public.task_events VALUES (12, 'fa54b9a7-2558-404b-b99d-4f1562f0b819', '7606e49d-dd22-41e3-910b-b889f8cd212a', 1, 1796025859265, 'state', NULL, 'succeeded');
INSERT INTO public.task_events VALUES (13, 'fa54b9a7-2558-404b-b99d-4f1562f0b819', '464a4fb4-1649-46d0-9604-071517b7102c', 1, 1796025859267, 'output', 'notice', 'corral: node ready; 0 plugin resource(s) already current
');
INSERT INTO public.task_events VALUES (14, 'fa54b9a7-2558-404b-b99d-4f1562f0b819', '464a4fb4-1649-46d0-9604-071517b7102c', 1, 1796025859276, 'state', NULL, 'succeeded');
INSERT INTO public.task_events VALUES (15, 'fa54b9a7-2558-404b-b99d-4f1562f0b819', 'd757d478-7fa1-4631-940a-a87e590ac6ee', 1, 1796025859279, 'state', NULL, 'running (attempt 1)');
INSERT INTO public.task_events VALUES (16, 'fa54b9a7-2558-404b-b99d-4f1562f0b819', '78de1bef-d32b-4fb9-9ac2-a1abb8e79c79', 1, 1796025859291, 'state', NULL, 'running (attempt 1)');
INSERT INTO public.task_events VALUES (17, 'fa54b9a7-2558-404b-b99d-4f1562f0b819', 'd757d478-7fa1-4631-940a-a87e590ac6ee', 1, 1796025859309, 'state', NULL, 'succeeded');
INSERT INTO public.task_events VALUES (18, 'fa54b9a7-2558-404b-b99d-4f1562f0b819', '26f43fe5-1852-4bc3-af89-d8d3b7c21bcc', 1, 1796025859321, 'state', NULL, 'running (attempt 1)');
INSERT INTO public.task_events VALUES (19, 'fa54b9a7-2558-404b-b99d-4f1562f0b819', '78de1bef-d32b-4fb9-9ac2-a1abb8e79c79', 1, 1796025859325, 'state', NULL, 'succeeded');
INSERT INTO public.task_events VALUES (20, 'fa54b9a7-2558-404b-b99d-4f1562f0b819', 'dc690e31-1c7f-4dd3-bd42-ede9e6ed8564', 1, 1796025859330, 'state', NULL, 'running (attempt 1)');
INSERT INTO public.task_events VALUES (21, 'fa54b9a7-2558-404b-b99d-4f1562f0b819', 'dc690e31-1c7f-4dd3-bd42-ede9e6ed8564', 1, 1796025859338, 'output', 'stdout', 'base installed on 127.1.0.1
');
INSERT INTO public.task_events VALUES (22, 'fa54b9a7-2558-404b-b99d-4f1562f0b819', '26f43fe5-1852-4bc3-af89-d8d3b7c21bcc', 1, 1796025859342, 'output', 'stdout', 'base installed on 127.1.0.2
');
INSERT INTO public.task_events VALUES (23, 'fa54b9a7-2558-404b-b99d-4f1562f0b819', 'dc690e31-1c7f-4dd3-bd42-ede9e6ed8564', 1, 1796025859351, 'state', NULL, 'succeeded');
INSERT INTO public.task_events VALUES (24, 'fa54b9a7-2558-404b-b99d-4f1562f0b819', 'f4109805-42cc-4271-9b48-c1b75823a025', 1, 1796025859359, 'state', NULL, 'running (attempt 1)');
INSERT INTO public.task_events VALUES (25, 'fa54b9a7-2558-404b-b99d-4f1562f0b819', '26f43fe5-1852-4bc3-af89-d8d3b7c21bcc', 1, 1796025859363, 'state', NULL, 'succeeded');
INSERT INTO public.task_events VALUES (26, 'fa54b9a7-2558-404b-b99d-4f1562f0b819', 'f4109805-42cc-4271-9b48-c1b75823a025', 1, 1796025859370, 'output', 'stdout', 'cluster shop
');
INSERT INTO public.task_events VALUES (27, 'fa54b9a7-2558-404b-b99d-4f1562f0b819', '61e55248-34d1-47f8-a56e-e5f8195f3092', 1, 1796025859375, 'state', NULL, 'running (attempt 1)');
INSERT INTO public.task_events VALUES (28, 'fa54b9a7-2558-404b-b99d-4f1562f0b819', 'f4109805-42cc-4271-9b48-c1b75823a025', 1, 1796025859380, 'state', NULL, 'succeeded');
INSERT INTO public.task_events VALUES (29, 'fa54b9a7-2558-404b-b99d-4f1562f0b819', '61e55248-34d1-47f8-a56e-e5f8195f3092', 1, 1796025859388, 'output', 'stdout', 'cluster shop
');
INSERT INTO public.task_events VALUES (30, 'fa54b9a7-2558-404b-b99d-4f1562f0b819', '61e55248-34d1-47f8-a56e-e5f8195f3092', 1, 1796025859399, 'state', NULL, 'succeeded');


--
-- Data for Name: task_groups; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: tasks; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.tasks VALUES ('2f872d22-abcd-4bfc-b213-f61ea00d9843', 'fa54b9a7-2558-404b-b99d-4f1562f0b819', 'ce7f042a-d903-43b9-9e80-3901b99db51d', 'b1a7055b-ac1c-4c19-82db-03d4220e35cb', 0, 1000, NULL, 'create', 0, 'succeeded', 0, 1, 1, 3, 1, 1000, 1796025858818, NULL, NULL, 1796025858818, 1796025858848, 1796025858987, NULL);
INSERT INTO public.tasks VALUES ('8590014d-b6f7-4d2d-8395-3661a04ad94a', 'fa54b9a7-2558-404b-b99d-4f1562f0b819', 'ce7f042a-d903-43b9-9e80-3901b99db51d', 'b1a7055b-ac1c-4c19-82db-03d4220e35cb', 1, 1001, NULL, 'create', 0, 'succeeded', 0, 1, 1, 3, 1, 1000, 1796025858818, NULL, NULL, 1796025858818, 1796025858848, 1796025859023, NULL);
INSERT INTO public.tasks VALUES ('3d334bbc-cfa6-4757-baf5-856c6b6dc5b8', 'fa54b9a7-2558-404b-b99d-4f1562f0b819', 'ce7f042a-d903-43b9-9e80-3901b99db51d', 'b1a7055b-ac1c-4c19-82db-03d4220e35cb', 2, 1000, NULL, 'confirm', 1, 'succeeded', 0, 1, 1, 3, 1, 1000, 1796025858818, NULL, NULL, 1796025858818, 1796025859032, 1796025859166, NULL);
INSERT INTO public.tasks VALUES ('b4b1a562-27bd-4876-b2b0-ffd97476a9d6', 'fa54b9a7-2558-404b-b99d-4f1562f0b819', 'ce7f042a-d903-43b9-9e80-3901b99db51d', 'b1a7055b-ac1c-4c19-82db-03d4220e35cb', 3, 1001, NULL, 'confirm', 1, 'succeeded', 0, 1, 1, 3, 1, 1000, 1796025858818, NULL, NULL, 1796025858818, 1796025859078, 1796025859212, NULL);
INSERT INTO public.tasks VALUES ('7606e49d-dd22-41e3-910b-b889f8cd212a', 'fa54b9a7-2558-404b-b99d-4f1562f0b819', 'ce7f042a-d903-43b9-9e80-3901b99db51d', 'b1a7055b-ac1c-4c19-82db-03d4220e35cb', 4, 1000, NULL, 'bootstrap', 2, 'succeeded', 0, 1, 1, 3, 1, 1000, 1796025858818, NULL, NULL, 1796025858818, 1796025859212, 1796025859259, NULL);
INSERT INTO public.tasks VALUES ('78de1bef-d32b-4fb9-9ac2-a1abb8e79c79', 'fa54b9a7-2558-404b-b99d-4f1562f0b819', 'ce7f042a-d903-43b9-9e80-3901b99db51d', 'b1a7055b-ac1c-4c19-82db-03d4220e35cb', 7, 1001, 'note', 'configure', 3, 'succeeded', 0, 1, 1, 3, 1, 1000, 1796025858818, NULL, NULL, 1796025858818, 1796025859286, 1796025859314, NULL);
INSERT INTO public.tasks VALUES ('464a4fb4-1649-46d0-9604-071517b7102c', 'fa54b9a7-2558-404b-b99d-4f1562f0b819', 'ce7f042a-d903-43b9-9e80-3901b99db51d', 'b1a7055b-ac1c-4c19-82db-03d4220e35cb', 5, 1001, NULL, 'bootstrap', 2, 'succeeded', 0, 1, 1, 3, 1, 1000, 1796025858818, NULL, NULL, 1796025858818, 1796025859240, 1796025859269, NULL);
INSERT INTO public.tasks VALUES ('f4109805-42cc-4271-9b48-c1b75823a025', 'fa54b9a7-2558-404b-b99d-4f1562f0b819', 'ce7f042a-d903-43b9-9e80-3901b99db51d', 'b1a7055b-ac1c-4c19-82db-03d4220e35cb', 11, 1001, 'note', 'start', 5, 'succeeded', 0, 1, 1, 3, 1, 1000, 1796025858818, NULL, NULL, 1796025858818, 1796025859357, 1796025859373, NULL);
INSERT INTO public.tasks VALUES ('d757d478-7fa1-4631-940a-a87e590ac6ee', 'fa54b9a7-2558-404b-b99d-4f1562f0b819', 'ce7f042a-d903-43b9-9e80-3901b99db51d', 'b1a7055b-ac1c-4c19-82db-03d4220e35cb', 6, 1000, 'note', 'configure', 3, 'succeeded', 0, 1, 1, 3, 1, 1000, 1796025858818, NULL, NULL, 1796025858818, 1796025859275, 1796025859296, NULL);
INSERT INTO public.tasks VALUES ('61e55248-34d1-47f8-a56e-e5f8195f3092', 'fa54b9a7-2558-404b-b99d-4f1562f0b819', 'ce7f042a-d903-43b9-9e80-3901b99db51d', 'b1a7055b-ac1c-4c19-82db-03d4220e35cb', 10, 1000, 'note', 'start', 5, 'succeeded', 0, 1, 1, 3, 1, 1000, 1796025858818, NULL, NULL, 1796025858818, 1796025859372, 1796025859389, NULL);
INSERT INTO public.tasks VALUES ('d2c23d6b-e044-41f1-aec9-70eaf36af74b', 'e3d2279d-eb6f-4060-ae33-2ca2d3b89230', 'ce7f042a-d903-43b9-9e80-3901b99db51d', '5f75fde4-9c3b-483d-8efb-ca113a389313', 0, 1000, NULL, 'create', 0, 'ready', 0, 0, 0, 3, 1, 1000, 1796025860365, NULL, NULL, 1796025860365, NULL, NULL, NULL);
INSERT INTO public.tasks VALUES ('dc690e31-1c7f-4dd3-bd42-ede9e6ed8564', 'fa54b9a7-2558-404b-b99d-4f1562f0b819', 'ce7f042a-d903-43b9-9e80-3901b99db51d', 'b1a7055b-ac1c-4c19-82db-03d4220e35cb', 9, 1001, 'base', 'install', 4, 'succeeded', 0, 1, 1, 3, 1, 1000, 1796025858818, NULL, NULL, 1796025858818, 1796025859330, 1796025859342, NULL);
INSERT INTO public.tasks VALUES ('26f43fe5-1852-4bc3-af89-d8d3b7c21bcc', 'fa54b9a7-2558-404b-b99d-4f1562f0b819', 'ce7f042a-d903-43b9-9e80-3901b99db51d', 'b1a7055b-ac1c-4c19-82db-03d4220e35cb', 8, 1000, 'base', 'install', 4, 'succeeded', 0, 1, 1, 3, 1, 1000, 1796025858818, NULL, NULL, 1796025858818, 1796025859319, 1796025859355, NULL);
INSERT INTO public.tasks VALUES ('b99739e1-2921-435e-93c0-54bb5178bcc3', 'e3d2279d-eb6f-4060-ae33-2ca2d3b89230', 'ce7f042a-d903-43b9-9e80-3901b99db51d', '5f75fde4-9c3b-483d-8efb-ca113a389313', 1, 1000, NULL, 'confirm', 1, 'pending', 1, 0, 0, 3, 1, 1000, 1796025860365, NULL, NULL, 1796025860365, NULL, NULL, NULL);
INSERT INTO public.tasks VALUES ('c6787ed4-9361-49fb-bca0-a235f5ba9255', 'e3d2279d-eb6f-4060-ae33-2ca2d3b89230', 'ce7f042a-d903-43b9-9e80-3901b99db51d', '5f75fde4-9c3b-483d-8efb-ca113a389313', 2, 1000, NULL, 'bootstrap', 2, 'pending', 1, 0, 0, 3, 1, 1000, 1796025860365, NULL, NULL, 1796025860365, NULL, NULL, NULL);
INSERT INTO public.tasks VALUES ('770edb36-e685-45d5-84f1-26f200a53cbf', 'e3d2279d-eb6f-4060-ae33-2ca2d3b89230', 'ce7f042a-d903-43b9-9e80-3901b99db51d', '5f75fde4-9c3b-483d-8efb-ca113a389313', 3, 1000, 'note', 'configure', 3, 'pending', 1, 0, 0, 3, 1, 1000, 1796025860365, NULL, NULL, 1796025860365, NULL, NULL, NULL);
INSERT INTO public.tasks VALUES ('a5babfaf-d372-4f86-8d9f-e4f67e839544', 'e3d2279d-eb6f-4060-ae33-2ca2d3b89230', 'ce7f042a-d903-43b9-9e80-3901b99db51d', '5f75fde4-9c3b-483d-8efb-ca113a389313', 4, 1000, 'base', 'install', 4, 'pending', 2, 0, 0, 3, 1, 1000, 1796025860365, NULL, NULL, 1796025860365, NULL, NULL, NULL);
INSERT INTO public.tasks VALUES ('076f6b94-9466-4597-ab67-58c99791174e', 'e3d2279d-eb6f-4060-ae33-2ca2d3b89230', 'ce7f042a-d903-43b9-9e80-3901b99db51d', '5f75fde4-9c3b-483d-8efb-ca113a389313', 5, 1000, 'note', 'start', 5, 'pending', 2, 0, 0, 3, 1, 1000, 1796025860365, NULL, NULL, 1796025860365, NULL, NULL, NULL);


--
-- Data for Name: tenant_budgets; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: tenants; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.tenants VALUES ('00000000-0000-0000-0000-000000000001', 'default', NULL, NULL, 1796025855000, '["local","ssh-pool","docker","ec2","exec"]', 0, 1, 0, 0);
INSERT INTO public.tenants VALUES ('ce7f042a-d903-43b9-9e80-3901b99db51d', 'acme', NULL, 100, 1796025857055, '["local","ssh-pool","docker","ec2","exec"]', 1, 1, 0, 0);


--
-- Data for Name: terminal_recordings; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: user_group_members; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: user_groups; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: user_provider_credentials; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: user_ssh_keys; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: users; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.users VALUES ('a20aba56-e441-42c1-810f-d303492dfe2f', '00000000-0000-0000-0000-000000000001', 'admin', 'superadmin', '$argon2id$v=19$m=19456,t=2,p=1$XxGBOEDtma7ZGiw1d8Apwg$rj40i/cq3gbWtDjThg1TD5jeDUY3FWn9r1YkZPHrEpE', 1796025856007, 0);
INSERT INTO public.users VALUES ('80f70547-092a-4866-bebe-d30a464b040a', 'ce7f042a-d903-43b9-9e80-3901b99db51d', 'alice', 'tenant-admin', '$argon2id$v=19$m=19456,t=2,p=1$w5lizanCY3QAxsyFWyE97w$j1QPlTctqBiOI3lVSf0cMepjSPEG1e7apD7uQwKLC3Y', 1796025857379, 0);
INSERT INTO public.users VALUES ('ea26604b-72a0-4a85-8d89-937c82a80203', 'ce7f042a-d903-43b9-9e80-3901b99db51d', 'bob', 'user', '$argon2id$v=19$m=19456,t=2,p=1$zFxya8vuy6jC19d7ombNpw$IraCKxGbKHFtA7VEOqUvTiC5O0TlYgTchd9N62mjED0', 1796025857471, 0);


--
-- Data for Name: session; Type: TABLE DATA; Schema: tower_sessions; Owner: -
--

INSERT INTO tower_sessions.session VALUES ('IptkdU-UufsiAsqtw9W_Iw', '\x93c41023bfd5c3adca0222fbb9944f75649b2281ab636f7272616c2e7573657283a47573657282a7757365725f6964d92461323061626135362d653434312d343263312d383130662d643330333439326466653266a565706f636800a463737266d932636f7272616c5f34596332375a744a536550775a4974704135584f43474a487a4e706378365132516f4a6a6b5f6235384c6faf7369676e65645f696e5f61745f6d73cf000001a22b7bb30d99cd07eacd014e100410ce2ea3755a000000', '2026-11-30 16:04:16.782464+00');
INSERT INTO tower_sessions.session VALUES ('siAAHTlehkm-8YIHFw6pZA', '\x93c41064a90e170782f1be49865e391d0020b281ab636f7272616c2e7573657283a47573657282a7757365725f6964d92438306637303534372d303932612d343836362d626562652d643330613436346230343061a565706f636800a463737266d932636f7272616c5f31646a52616f52466338612d333159504b6c77376e726b693741384e44475f79597969736f504a4d4f7973af7369676e65645f696e5f61745f6d73cf000001a22b7bb66d99cd07eacd014e100411ce267d03e1000000', '2026-11-30 16:04:17.645727+00');


--
-- Name: task_events_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.task_events_id_seq', 30, true);


--
-- Name: _sqlx_migrations _sqlx_migrations_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public._sqlx_migrations
    ADD CONSTRAINT _sqlx_migrations_pkey PRIMARY KEY (version);


--
-- Name: api_tokens api_tokens_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.api_tokens
    ADD CONSTRAINT api_tokens_pkey PRIMARY KEY (id);


--
-- Name: api_tokens api_tokens_secret_sha256_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.api_tokens
    ADD CONSTRAINT api_tokens_secret_sha256_key UNIQUE (secret_sha256);


--
-- Name: approval_requests approval_requests_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.approval_requests
    ADD CONSTRAINT approval_requests_pkey PRIMARY KEY (id);


--
-- Name: approval_rules approval_rules_new_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.approval_rules
    ADD CONSTRAINT approval_rules_new_pkey PRIMARY KEY (id);


--
-- Name: audit_log audit_log_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.audit_log
    ADD CONSTRAINT audit_log_pkey PRIMARY KEY (id);


--
-- Name: catalog_entities catalog_entities_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.catalog_entities
    ADD CONSTRAINT catalog_entities_pkey PRIMARY KEY (tenant_id, kind, name, version);


--
-- Name: client_keys client_keys_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.client_keys
    ADD CONSTRAINT client_keys_pkey PRIMARY KEY (name);


--
-- Name: clusters clusters_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.clusters
    ADD CONSTRAINT clusters_pkey PRIMARY KEY (id);


--
-- Name: cost_intervals cost_intervals_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.cost_intervals
    ADD CONSTRAINT cost_intervals_pkey PRIMARY KEY (id);


--
-- Name: hook_attempts hook_attempts_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.hook_attempts
    ADD CONSTRAINT hook_attempts_pkey PRIMARY KEY (id);


--
-- Name: hook_deliveries hook_deliveries_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.hook_deliveries
    ADD CONSTRAINT hook_deliveries_pkey PRIMARY KEY (id);


--
-- Name: hooks hooks_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.hooks
    ADD CONSTRAINT hooks_pkey PRIMARY KEY (id);


--
-- Name: job_documents job_documents_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.job_documents
    ADD CONSTRAINT job_documents_pkey PRIMARY KEY (job_id);


--
-- Name: jobs jobs_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.jobs
    ADD CONSTRAINT jobs_pkey PRIMARY KEY (id);


--
-- Name: login_attempts login_attempts_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.login_attempts
    ADD CONSTRAINT login_attempts_pkey PRIMARY KEY (id);


--
-- Name: nodes nodes_cluster_id_number_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.nodes
    ADD CONSTRAINT nodes_cluster_id_number_key UNIQUE (cluster_id, number);


--
-- Name: nodes nodes_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.nodes
    ADD CONSTRAINT nodes_pkey PRIMARY KEY (id);


--
-- Name: plugin_resource_blobs plugin_resource_blobs_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.plugin_resource_blobs
    ADD CONSTRAINT plugin_resource_blobs_pkey PRIMARY KEY (tenant_id, kind, name, version);


--
-- Name: plugin_resources plugin_resources_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.plugin_resources
    ADD CONSTRAINT plugin_resources_pkey PRIMARY KEY (tenant_id, kind, name, version);


--
-- Name: pool_hosts pool_hosts_checked_out_node_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.pool_hosts
    ADD CONSTRAINT pool_hosts_checked_out_node_key UNIQUE (checked_out_node);


--
-- Name: pool_hosts pool_hosts_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.pool_hosts
    ADD CONSTRAINT pool_hosts_pkey PRIMARY KEY (id);


--
-- Name: pool_hosts pool_hosts_tenant_id_host_port_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.pool_hosts
    ADD CONSTRAINT pool_hosts_tenant_id_host_port_key UNIQUE (tenant_id, host, port);


--
-- Name: pool_hosts pool_hosts_tenant_id_name_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.pool_hosts
    ADD CONSTRAINT pool_hosts_tenant_id_name_key UNIQUE (tenant_id, name);


--
-- Name: provider_credentials provider_credentials_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.provider_credentials
    ADD CONSTRAINT provider_credentials_pkey PRIMARY KEY (tenant_id, provider);


--
-- Name: provider_tests provider_tests_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.provider_tests
    ADD CONSTRAINT provider_tests_pkey PRIMARY KEY (id);


--
-- Name: rollout_clusters rollout_clusters_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.rollout_clusters
    ADD CONSTRAINT rollout_clusters_pkey PRIMARY KEY (rollout_id, cluster_id);


--
-- Name: rollouts rollouts_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.rollouts
    ADD CONSTRAINT rollouts_pkey PRIMARY KEY (id);


--
-- Name: service_health service_health_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.service_health
    ADD CONSTRAINT service_health_pkey PRIMARY KEY (cluster_id, node_number, service);


--
-- Name: sso_cli_codes sso_cli_codes_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.sso_cli_codes
    ADD CONSTRAINT sso_cli_codes_pkey PRIMARY KEY (code_hash);


--
-- Name: sso_identities sso_identities_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.sso_identities
    ADD CONSTRAINT sso_identities_pkey PRIMARY KEY (issuer, subject);


--
-- Name: task_attempts task_attempts_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.task_attempts
    ADD CONSTRAINT task_attempts_pkey PRIMARY KEY (id);


--
-- Name: task_deps task_deps_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.task_deps
    ADD CONSTRAINT task_deps_pkey PRIMARY KEY (job_id, prereq, task);


--
-- Name: task_events task_events_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.task_events
    ADD CONSTRAINT task_events_pkey PRIMARY KEY (id);


--
-- Name: task_groups task_groups_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.task_groups
    ADD CONSTRAINT task_groups_pkey PRIMARY KEY (job_id, number);


--
-- Name: tasks tasks_job_id_number_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.tasks
    ADD CONSTRAINT tasks_job_id_number_key UNIQUE (job_id, number);


--
-- Name: tasks tasks_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.tasks
    ADD CONSTRAINT tasks_pkey PRIMARY KEY (id);


--
-- Name: tenant_budgets tenant_budgets_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.tenant_budgets
    ADD CONSTRAINT tenant_budgets_pkey PRIMARY KEY (tenant_id);


--
-- Name: tenants tenants_name_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.tenants
    ADD CONSTRAINT tenants_name_key UNIQUE (name);


--
-- Name: tenants tenants_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.tenants
    ADD CONSTRAINT tenants_pkey PRIMARY KEY (id);


--
-- Name: terminal_recordings terminal_recordings_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.terminal_recordings
    ADD CONSTRAINT terminal_recordings_pkey PRIMARY KEY (audit_id);


--
-- Name: user_group_members user_group_members_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.user_group_members
    ADD CONSTRAINT user_group_members_pkey PRIMARY KEY (group_id, user_id);


--
-- Name: user_groups user_groups_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.user_groups
    ADD CONSTRAINT user_groups_pkey PRIMARY KEY (id);


--
-- Name: user_groups user_groups_tenant_id_name_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.user_groups
    ADD CONSTRAINT user_groups_tenant_id_name_key UNIQUE (tenant_id, name);


--
-- Name: user_provider_credentials user_provider_credentials_bound_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.user_provider_credentials
    ADD CONSTRAINT user_provider_credentials_bound_pkey PRIMARY KEY (tenant_id, user_id, provider);


--
-- Name: user_ssh_keys user_ssh_keys_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.user_ssh_keys
    ADD CONSTRAINT user_ssh_keys_pkey PRIMARY KEY (id);


--
-- Name: user_ssh_keys user_ssh_keys_user_id_fingerprint_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.user_ssh_keys
    ADD CONSTRAINT user_ssh_keys_user_id_fingerprint_key UNIQUE (user_id, fingerprint);


--
-- Name: users users_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.users
    ADD CONSTRAINT users_pkey PRIMARY KEY (id);


--
-- Name: users users_username_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.users
    ADD CONSTRAINT users_username_key UNIQUE (username);


--
-- Name: session session_pkey; Type: CONSTRAINT; Schema: tower_sessions; Owner: -
--

ALTER TABLE ONLY tower_sessions.session
    ADD CONSTRAINT session_pkey PRIMARY KEY (id);


--
-- Name: api_tokens_user; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX api_tokens_user ON public.api_tokens USING btree (user_id);


--
-- Name: approval_requests_cluster; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX approval_requests_cluster ON public.approval_requests USING btree (cluster_id, created_at_ms);


--
-- Name: approval_requests_due; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX approval_requests_due ON public.approval_requests USING btree (expires_at_ms) WHERE (state = 'pending'::text);


--
-- Name: approval_requests_tenant; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX approval_requests_tenant ON public.approval_requests USING btree (tenant_id, created_at_ms);


--
-- Name: approval_rules_tenant; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX approval_rules_tenant ON public.approval_rules USING btree (tenant_id, created_at_ms);


--
-- Name: audit_log_tenant_at; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX audit_log_tenant_at ON public.audit_log USING btree (tenant_id, at_ms);


--
-- Name: clusters_lease; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX clusters_lease ON public.clusters USING btree (lease_expires_ms) WHERE (state = 'active'::text);


--
-- Name: clusters_live_name; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX clusters_live_name ON public.clusters USING btree (tenant_id, name) WHERE (state <> 'deleted'::text);


--
-- Name: cost_intervals_cluster; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX cost_intervals_cluster ON public.cost_intervals USING btree (cluster_id, start_ms);


--
-- Name: cost_intervals_tenant; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX cost_intervals_tenant ON public.cost_intervals USING btree (tenant_id, start_ms);


--
-- Name: hook_attempts_delivery; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX hook_attempts_delivery ON public.hook_attempts USING btree (delivery_id, attempt);


--
-- Name: hook_deliveries_due; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX hook_deliveries_due ON public.hook_deliveries USING btree (next_attempt_ms) WHERE (state = ANY (ARRAY['pending'::text, 'sending'::text]));


--
-- Name: hook_deliveries_hook; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX hook_deliveries_hook ON public.hook_deliveries USING btree (hook_id, created_at_ms);


--
-- Name: hooks_tenant; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX hooks_tenant ON public.hooks USING btree (tenant_id, created_at_ms);


--
-- Name: jobs_active; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX jobs_active ON public.jobs USING btree (created_at_ms) WHERE (state = ANY (ARRAY['queued'::text, 'running'::text]));


--
-- Name: jobs_cluster; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX jobs_cluster ON public.jobs USING btree (cluster_id, created_at_ms);


--
-- Name: jobs_tenant_state; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX jobs_tenant_state ON public.jobs USING btree (tenant_id, state);


--
-- Name: login_attempts_at; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX login_attempts_at ON public.login_attempts USING btree (at_ms);


--
-- Name: login_attempts_key; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX login_attempts_key ON public.login_attempts USING btree (key_hash, at_ms);


--
-- Name: nodes_cluster_version; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX nodes_cluster_version ON public.nodes USING btree (cluster_id, version);


--
-- Name: plugin_resources_staged; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX plugin_resources_staged ON public.plugin_resources USING btree (tenant_id, kind, name) WHERE (staged = 1);


--
-- Name: provider_tests_by_state; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX provider_tests_by_state ON public.provider_tests USING btree (state, created_at_ms);


--
-- Name: rollouts_state; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX rollouts_state ON public.rollouts USING btree (state);


--
-- Name: rollouts_tenant; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX rollouts_tenant ON public.rollouts USING btree (tenant_id, created_at_ms);


--
-- Name: service_health_due; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX service_health_due ON public.service_health USING btree (next_check_ms);


--
-- Name: sso_identities_user; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX sso_identities_user ON public.sso_identities USING btree (user_id);


--
-- Name: task_attempts_task; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX task_attempts_task ON public.task_attempts USING btree (task_id, attempt);


--
-- Name: task_events_job; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX task_events_job ON public.task_events USING btree (job_id, id);


--
-- Name: tasks_ready_job; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX tasks_ready_job ON public.tasks USING btree (job_id, not_before_ms, number) WHERE (state = 'ready'::text);


--
-- Name: tasks_running_lease; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX tasks_running_lease ON public.tasks USING btree (lease_expires_ms) WHERE (state = 'running'::text);


--
-- Name: tasks_running_node; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX tasks_running_node ON public.tasks USING btree (cluster_id, node) WHERE (state = 'running'::text);


--
-- Name: tasks_running_tenant; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX tasks_running_tenant ON public.tasks USING btree (tenant_id) WHERE (state = 'running'::text);


--
-- Name: terminal_recordings_tenant; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX terminal_recordings_tenant ON public.terminal_recordings USING btree (tenant_id);


--
-- Name: user_group_members_user; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX user_group_members_user ON public.user_group_members USING btree (user_id);


--
-- Name: user_ssh_keys_user; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX user_ssh_keys_user ON public.user_ssh_keys USING btree (user_id);


--
-- Name: users_tenant; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX users_tenant ON public.users USING btree (tenant_id);


--
-- Name: api_tokens api_tokens_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.api_tokens
    ADD CONSTRAINT api_tokens_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;


--
-- Name: approval_requests approval_requests_cluster_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.approval_requests
    ADD CONSTRAINT approval_requests_cluster_id_fkey FOREIGN KEY (cluster_id) REFERENCES public.clusters(id) ON DELETE CASCADE;


--
-- Name: approval_requests approval_requests_tenant_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.approval_requests
    ADD CONSTRAINT approval_requests_tenant_id_fkey FOREIGN KEY (tenant_id) REFERENCES public.tenants(id) ON DELETE CASCADE;


--
-- Name: approval_rules approval_rules_new_tenant_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.approval_rules
    ADD CONSTRAINT approval_rules_new_tenant_id_fkey FOREIGN KEY (tenant_id) REFERENCES public.tenants(id) ON DELETE CASCADE;


--
-- Name: catalog_entities catalog_entities_tenant_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.catalog_entities
    ADD CONSTRAINT catalog_entities_tenant_id_fkey FOREIGN KEY (tenant_id) REFERENCES public.tenants(id) ON DELETE CASCADE;


--
-- Name: clusters clusters_owner_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.clusters
    ADD CONSTRAINT clusters_owner_id_fkey FOREIGN KEY (owner_id) REFERENCES public.users(id) ON DELETE SET NULL;


--
-- Name: clusters clusters_tenant_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.clusters
    ADD CONSTRAINT clusters_tenant_id_fkey FOREIGN KEY (tenant_id) REFERENCES public.tenants(id) ON DELETE CASCADE;


--
-- Name: cost_intervals cost_intervals_tenant_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.cost_intervals
    ADD CONSTRAINT cost_intervals_tenant_id_fkey FOREIGN KEY (tenant_id) REFERENCES public.tenants(id) ON DELETE CASCADE;


--
-- Name: hook_attempts hook_attempts_delivery_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.hook_attempts
    ADD CONSTRAINT hook_attempts_delivery_id_fkey FOREIGN KEY (delivery_id) REFERENCES public.hook_deliveries(id) ON DELETE CASCADE;


--
-- Name: hook_deliveries hook_deliveries_hook_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.hook_deliveries
    ADD CONSTRAINT hook_deliveries_hook_id_fkey FOREIGN KEY (hook_id) REFERENCES public.hooks(id) ON DELETE CASCADE;


--
-- Name: hooks hooks_tenant_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.hooks
    ADD CONSTRAINT hooks_tenant_id_fkey FOREIGN KEY (tenant_id) REFERENCES public.tenants(id) ON DELETE CASCADE;


--
-- Name: job_documents job_documents_job_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.job_documents
    ADD CONSTRAINT job_documents_job_id_fkey FOREIGN KEY (job_id) REFERENCES public.jobs(id) ON DELETE CASCADE;


--
-- Name: jobs jobs_cluster_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.jobs
    ADD CONSTRAINT jobs_cluster_id_fkey FOREIGN KEY (cluster_id) REFERENCES public.clusters(id) ON DELETE CASCADE;


--
-- Name: jobs jobs_tenant_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.jobs
    ADD CONSTRAINT jobs_tenant_id_fkey FOREIGN KEY (tenant_id) REFERENCES public.tenants(id) ON DELETE CASCADE;


--
-- Name: nodes nodes_cluster_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.nodes
    ADD CONSTRAINT nodes_cluster_id_fkey FOREIGN KEY (cluster_id) REFERENCES public.clusters(id) ON DELETE CASCADE;


--
-- Name: plugin_resource_blobs plugin_resource_blobs_tenant_id_kind_name_version_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.plugin_resource_blobs
    ADD CONSTRAINT plugin_resource_blobs_tenant_id_kind_name_version_fkey FOREIGN KEY (tenant_id, kind, name, version) REFERENCES public.plugin_resources(tenant_id, kind, name, version) ON DELETE CASCADE;


--
-- Name: plugin_resources plugin_resources_tenant_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.plugin_resources
    ADD CONSTRAINT plugin_resources_tenant_id_fkey FOREIGN KEY (tenant_id) REFERENCES public.tenants(id) ON DELETE CASCADE;


--
-- Name: pool_hosts pool_hosts_tenant_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.pool_hosts
    ADD CONSTRAINT pool_hosts_tenant_id_fkey FOREIGN KEY (tenant_id) REFERENCES public.tenants(id) ON DELETE CASCADE;


--
-- Name: provider_credentials provider_credentials_tenant_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.provider_credentials
    ADD CONSTRAINT provider_credentials_tenant_id_fkey FOREIGN KEY (tenant_id) REFERENCES public.tenants(id) ON DELETE CASCADE;


--
-- Name: provider_tests provider_tests_tenant_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.provider_tests
    ADD CONSTRAINT provider_tests_tenant_id_fkey FOREIGN KEY (tenant_id) REFERENCES public.tenants(id) ON DELETE CASCADE;


--
-- Name: rollout_clusters rollout_clusters_cluster_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.rollout_clusters
    ADD CONSTRAINT rollout_clusters_cluster_id_fkey FOREIGN KEY (cluster_id) REFERENCES public.clusters(id) ON DELETE CASCADE;


--
-- Name: rollout_clusters rollout_clusters_rollout_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.rollout_clusters
    ADD CONSTRAINT rollout_clusters_rollout_id_fkey FOREIGN KEY (rollout_id) REFERENCES public.rollouts(id) ON DELETE CASCADE;


--
-- Name: rollouts rollouts_tenant_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.rollouts
    ADD CONSTRAINT rollouts_tenant_id_fkey FOREIGN KEY (tenant_id) REFERENCES public.tenants(id) ON DELETE CASCADE;


--
-- Name: service_health service_health_cluster_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.service_health
    ADD CONSTRAINT service_health_cluster_id_fkey FOREIGN KEY (cluster_id) REFERENCES public.clusters(id) ON DELETE CASCADE;


--
-- Name: sso_cli_codes sso_cli_codes_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.sso_cli_codes
    ADD CONSTRAINT sso_cli_codes_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;


--
-- Name: sso_identities sso_identities_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.sso_identities
    ADD CONSTRAINT sso_identities_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;


--
-- Name: task_attempts task_attempts_task_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.task_attempts
    ADD CONSTRAINT task_attempts_task_id_fkey FOREIGN KEY (task_id) REFERENCES public.tasks(id) ON DELETE CASCADE;


--
-- Name: task_deps task_deps_job_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.task_deps
    ADD CONSTRAINT task_deps_job_id_fkey FOREIGN KEY (job_id) REFERENCES public.jobs(id) ON DELETE CASCADE;


--
-- Name: task_events task_events_job_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.task_events
    ADD CONSTRAINT task_events_job_id_fkey FOREIGN KEY (job_id) REFERENCES public.jobs(id) ON DELETE CASCADE;


--
-- Name: task_groups task_groups_job_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.task_groups
    ADD CONSTRAINT task_groups_job_id_fkey FOREIGN KEY (job_id) REFERENCES public.jobs(id) ON DELETE CASCADE;


--
-- Name: tasks tasks_job_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.tasks
    ADD CONSTRAINT tasks_job_id_fkey FOREIGN KEY (job_id) REFERENCES public.jobs(id) ON DELETE CASCADE;


--
-- Name: tenant_budgets tenant_budgets_tenant_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.tenant_budgets
    ADD CONSTRAINT tenant_budgets_tenant_id_fkey FOREIGN KEY (tenant_id) REFERENCES public.tenants(id) ON DELETE CASCADE;


--
-- Name: user_group_members user_group_members_group_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.user_group_members
    ADD CONSTRAINT user_group_members_group_id_fkey FOREIGN KEY (group_id) REFERENCES public.user_groups(id) ON DELETE CASCADE;


--
-- Name: user_group_members user_group_members_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.user_group_members
    ADD CONSTRAINT user_group_members_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;


--
-- Name: user_groups user_groups_tenant_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.user_groups
    ADD CONSTRAINT user_groups_tenant_id_fkey FOREIGN KEY (tenant_id) REFERENCES public.tenants(id) ON DELETE CASCADE;


--
-- Name: user_provider_credentials user_provider_credentials_bound_tenant_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.user_provider_credentials
    ADD CONSTRAINT user_provider_credentials_bound_tenant_id_fkey FOREIGN KEY (tenant_id) REFERENCES public.tenants(id) ON DELETE CASCADE;


--
-- Name: user_provider_credentials user_provider_credentials_bound_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.user_provider_credentials
    ADD CONSTRAINT user_provider_credentials_bound_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;


--
-- Name: user_ssh_keys user_ssh_keys_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.user_ssh_keys
    ADD CONSTRAINT user_ssh_keys_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;


--
-- Name: users users_tenant_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.users
    ADD CONSTRAINT users_tenant_id_fkey FOREIGN KEY (tenant_id) REFERENCES public.tenants(id) ON DELETE CASCADE;


--
-- PostgreSQL database dump complete
--

\unrestrict GoauXCf3At1fnct65LFktrrOFgDzDiYlxEzFANNFXSTolfkkF49QMgbXaJjor7T

