//! Loading: read the file and its includes, walk every section, and either return the compiled
//! [`Config`] with its warnings or every error found.

use std::path::Path;
use std::rc::Rc;

use pointwork_core::{Deployment, RouterSettings};

use crate::auth::check_mcp_permissions;
use crate::cache_read::{read_cache, settle_cache};
use crate::check::{Checker, KeyPath};
use crate::cluster_read::resolve_cluster;
use crate::complexity_router::resolve_complexity_routers;
use crate::config::duplicate_ids;
use crate::cost_map::{self, CostMap, MODEL_COST_MAP};
use crate::deployment_id::number_pooled_ids;
use crate::env::Env;
use crate::export::{read_export, TELEMETRY};
use crate::include::{assemble, MainFile, MODEL_LIST_KEY};
use crate::mcp_read::{read_mcp_servers, MCP_SERVERS};
use crate::model_list::{read_model_lists, CompiledEntry};
use crate::node::Node;
use crate::pareto::read_pareto;
use crate::pointwork_section::{read_pointwork, PointworkSection};
use crate::policies::warn_uncapped;
use crate::policy_router::resolve_policy_routers;
use crate::references::{check_references, ModelNames};
use crate::router::{read_router, RouterSources};
use crate::sections::{
    read_environment_variables, read_general_settings, warn_ignored_sections, LITELLM_SETTINGS, POINTWORK,
    ROUTER_SETTINGS,
};
use crate::tls::resolve_tls;
use crate::yaml::parse_config_yaml;
use crate::{Auth, Config, ConfigError, ConfigErrors, CostMapSource, DeploymentInfo, Loaded};

/// How messages name a config given as a string.
const INLINE_LABEL: &str = "<config>";

/// Reads the config file and its includes; `os.environ/` reads the process environment.
pub fn load_file(path: &Path) -> Result<Loaded, ConfigErrors> {
    let label = path.display().to_string();
    let text = std::fs::read_to_string(path)
        .map_err(|e| ConfigError { path: label.clone(), message: format!("cannot read the config file: {e}") })?;
    let process_env = |name: &str| std::env::var(name).ok();
    let dir = path.parent().unwrap_or(Path::new(""));
    compile(&text, label.into(), dir, Some(path), &process_env)
}

/// Compiles a config given as text; includes are resolved against `base_dir` and `os.environ/`
/// asks `env` (after the config's own `environment_variables`).
pub fn load_str(yaml: &str, base_dir: &Path, env: &dyn Fn(&str) -> Option<String>) -> Result<Loaded, ConfigErrors> {
    compile(yaml, INLINE_LABEL.into(), base_dir, None, env)
}

fn compile(
    yaml: &str,
    label: Rc<str>,
    dir: &Path,
    path: Option<&Path>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Loaded, ConfigErrors> {
    let (root, duplicate) = parse_config_yaml(yaml, &label)?;
    let mut c = Checker::new(Env::new(env));
    if let Some(w) = duplicate {
        c.warn(w.path, w.message);
    }
    let main = MainFile { root, label, dir, path };
    let Some(doc) = assemble(main, &mut c) else {
        return Err(ConfigErrors(c.finish().0));
    };

    // First, so `os.environ/` references everywhere else can see these variables.
    read_environment_variables(&mut c, &doc);

    let lists = read_model_lists(&mut c, &doc.model_lists);

    let (mut router, references, mut redis) = read_router(
        &mut c,
        RouterSources {
            router_settings: doc.section(ROUTER_SETTINGS).map(|s| (&s.node, s.path.clone())),
            litellm_settings: doc.section(LITELLM_SETTINGS).map(|s| (&s.node, s.path.clone())),
        },
    );
    let mut general = read_general_settings(&mut c, &doc);
    let PointworkSection { mut gateway, mut auth, policies, default_policy, cluster, cache, tls } =
        match doc.section(POINTWORK) {
            Some(s) => read_pointwork(&mut c, &s.node, s.path.clone(), &s.dir),
            None => PointworkSection::default(),
        };
    gateway.tls = resolve_tls(&mut c, tls);
    let litellm_settings = doc.section(LITELLM_SETTINGS).map(|s| (&s.node, s.path.clone()));
    let cache_said = read_cache(&mut c, litellm_settings, &mut redis, cluster.as_ref());
    let cluster_off;
    (gateway.cluster, cluster_off) = resolve_cluster(&mut c, redis, cluster);
    let cache = settle_cache(&mut c, cache_said, cache, gateway.cluster.as_ref(), cluster_off.as_deref());
    general.apply_health_checks(&mut gateway.health_checks);
    let database = general.database(&c);
    // With models stored in the database, the file may have none (LiteLLM's UI-managed setup).
    // `store_model_in_db` without a database stores nothing, but LiteLLM starts with it too.
    let models_may_be_stored = database.as_ref().is_some_and(|d| d.store_model_in_db) || general.store_model_in_db(&c);
    let lists_are_well_formed = doc.model_lists.iter().all(|l| matches!(l.node, Node::Null | Node::List(_)));
    if lists.total == 0 && lists_are_well_formed && !models_may_be_stored {
        c.error(MODEL_LIST_KEY, "at least one deployment is required");
    } else if lists.total > 0 && lists.compiled.is_empty() && lists.left_out.len() == lists.total {
        // As LiteLLM starts and fails each request: the gateway starts, serves no model, and
        // `check --strict` refuses.
        c.warn(MODEL_LIST_KEY, "every entry is left out (see the warnings): no model is served");
    }
    let master_key = general.master_key;
    if let (true, None, true, Some(section)) =
        (auth.metrics_need_key, &master_key, auth.admin_keys.is_empty(), doc.section(POINTWORK))
    {
        let path = section.path.key("auth").key("metrics");
        c.error(path, "`key` needs general_settings.master_key or an admin key: nothing could open /metrics");
    }
    let mut entries = lists.compiled;
    let map_path = doc.section(POINTWORK).map(|s| s.path.key(MODEL_COST_MAP));
    fill_from_cost_map(&mut c, &gateway.model_cost_map, map_path, &mut entries);
    number_pooled_ids(entries.iter_mut().map(|e| (&mut e.deployment.id, e.info.derived_id)));
    let (deployments, deployment_info): (Vec<_>, Vec<_>) = entries.into_iter().map(|e| (e.deployment, e.info)).unzip();
    let names = ModelNames {
        deployments: &deployments,
        aliases: &router.model_group_alias,
        left_out: &lists.left_out,
        failed: &lists.failed_names,
    };
    let gone = check_references(&mut c, &references, &names, models_may_be_stored);
    let policy_routers = resolve_policy_routers(&mut c, &lists.policy_routers, &names);
    let complexity_routers =
        resolve_complexity_routers(&mut c, &lists.complexity_routers, &lists.policy_routers, &names);
    for list in
        [&mut router.fallbacks.generic, &mut router.fallbacks.context_window, &mut router.fallbacks.content_policy]
    {
        list.drop_names(&|name| gone.contains(name));
    }
    if let Some(section) = doc.section(ROUTER_SETTINGS) {
        warn_idle_budgets(&mut c, &router, &deployments, &section.path);
    }
    if deployments.iter().any(|d| d.pass_through) {
        router.model_providers = std::sync::Arc::new(crate::pass_through::model_providers(cost_map::bundled()));
    }
    grant_access_groups(&mut auth, &deployments, &deployment_info);
    let mcp = read_mcp_servers(
        &mut c,
        doc.section(MCP_SERVERS).map(|s| (&s.node, s.path.clone())),
        doc.section(LITELLM_SETTINGS).map(|s| (&s.node, s.path.clone())),
    );
    if let Some(section) = doc.section(POINTWORK) {
        check_mcp_permissions(&mut c, &auth, &mcp, &section.path);
        warn_unpriced_budgets(&mut c, &auth, &deployments, &section.path);
        warn_uncapped(&mut c, &policies, &deployments, &section.path);
    }
    let litellm_settings = doc.section(LITELLM_SETTINGS).map(|s| (&s.node, s.path.clone()));
    let pareto = read_pareto(&mut c, litellm_settings.clone(), &deployments, &deployment_info);
    let telemetry = doc.section(POINTWORK).and_then(|s| match &s.node {
        Node::Map(_) => s.node.get(TELEMETRY).map(|n| (n, s.path.key(TELEMETRY))),
        _ => None,
    });
    let export = read_export(&mut c, litellm_settings, telemetry);
    warn_ignored_sections(&mut c, &doc);
    for e in duplicate_ids(&deployments, &deployment_info) {
        c.error(e.path, e.message);
    }

    let (errors, warnings) = c.finish();
    if !errors.is_empty() {
        return Err(ConfigErrors(errors));
    }
    Ok(Loaded {
        config: Config {
            deployments,
            deployment_info,
            left_out: lists.left_out,
            router,
            gateway,
            master_key,
            auth,
            database,
            policies,
            default_policy,
            policy_routers,
            complexity_routers,
            export,
            mcp: mcp.settings,
            cache,
            pareto,
            placeholders: cluster_off
                .iter()
                .filter(|why| why.ends_with(crate::cluster_read::PLACEHOLDER))
                .cloned()
                .collect(),
            cluster_off,
            files: doc.files,
            warning_count: warnings.len(),
        },
        warnings,
    })
}

/// A key's budget counts spend at the deployments' prices: one it may use without both prices
/// spends nothing, which the operator should know.
fn warn_unpriced_budgets(c: &mut Checker, auth: &Auth, deployments: &[Deployment], section: &KeyPath) {
    for (i, key) in auth.virtual_keys.iter().enumerate() {
        if key.limits.max_budget.is_none() {
            continue;
        }
        let may_use = |group: &str| {
            key.models.as_ref().is_none_or(|models| {
                models.iter().any(|m| m.strip_suffix('*').map_or(m == group, |prefix| group.starts_with(prefix)))
            })
        };
        let unpriced: Vec<&str> = deployments
            .iter()
            .filter(|d| may_use(&d.model_name))
            .filter(|d| d.input_cost_per_token.is_none() || d.output_cost_per_token.is_none())
            .map(|d| d.id.as_str())
            .collect();
        if !unpriced.is_empty() {
            let path = section.key("auth").key("virtual_keys").index(i).key("max_budget");
            c.warn(
                &path,
                format!(
                    "these deployments have no input_cost_per_token/output_cost_per_token (nor a model_cost_map entry) and add no spend: {}",
                    unpriced.join(", ")
                ),
            );
        }
    }
}

/// Fills in what the entries do not set from the model cost map `source` names (an unreadable
/// file is an error at `path`).
pub(crate) fn fill_from_cost_map(
    c: &mut Checker,
    source: &CostMapSource,
    path: Option<KeyPath>,
    entries: &mut [CompiledEntry],
) {
    let read;
    let map = match source {
        CostMapSource::Bundled => cost_map::bundled(),
        CostMapSource::Off => return,
        CostMapSource::File(file) => match CostMap::read(file) {
            Ok(map) => {
                read = map;
                &read
            }
            Err(message) => {
                c.error(path.map_or_else(|| MODEL_COST_MAP.to_string(), |p| p.to_string()), message);
                return;
            }
        },
    };
    for e in entries {
        map.fill(&e.model, &mut e.deployment, &e.info.model_info);
    }
}

/// A provider budget whose provider has no deployment here limits nothing: say so.
fn warn_idle_budgets(c: &mut Checker, router: &RouterSettings, deployments: &[Deployment], section: &KeyPath) {
    for budget in &router.provider_budgets {
        if !deployments.iter().any(|d| d.provider == budget.provider) {
            let name = budget.provider.prefix();
            let path = section.key("provider_budget_config").key(name);
            c.warn(path, format!("no deployment of provider {name}: this budget limits nothing"));
        }
    }
}

/// A virtual key's `models` may name an access group (`model_info.access_groups`, LiteLLM's):
/// it grants every model group with a deployment in that access group.
pub(crate) fn grant_access_groups(auth: &mut Auth, deployments: &[Deployment], info: &[DeploymentInfo]) {
    for key in &mut auth.virtual_keys {
        let Some(models) = &mut key.models else { continue };
        let granted: Vec<String> = deployments
            .iter()
            .zip(info)
            .filter(|(_, i)| i.access_groups.iter().any(|g| models.contains(g)))
            .map(|(d, _)| d.model_name.clone())
            .filter(|group| !models.contains(group))
            .collect();
        for group in granted {
            if !models.contains(&group) {
                models.push(group);
            }
        }
    }
}
