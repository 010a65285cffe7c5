import { html } from "htm/preact";
import { useEffect, useState } from "preact/hooks";
import type { ApiKeyListPage, ConfigVersion, OrganizationListPage, ProjectConfig, ProjectListPage } from "../../../packages/client/src/index.js";
import { configChanges } from "./config-diff.js";
import { sinceText } from "./labels.js";
import { useQuery } from "./location.js";
import { adminClient, session } from "./session.js";
import { TestCall } from "./test-call.js";
import { ErrorNote, Field, formatDate, formValues } from "./ui.js";

/** What `GET /admin/projects/{id}` shows. */
interface ProjectView {
  id: string;
  organization_id: string;
  name: string;
  config_version_id: string;
  config: Record<string, unknown>;
  versions: { id: string; version: number; created_at: string }[];
}

type Organization = OrganizationListPage["organizations"][number];
type ApiKey = ApiKeyListPage["api_keys"][number];
type Project = ProjectListPage["projects"][number];

/**
 * The project view shows its configuration with every default filled in, some of which the input refuses (an empty
 * `base_url` is not a URL, a null `simulation.provider` is "the agent's own"), and `api_key_set`, which only reports:
 * both are left out of what is published, so that an edited view publishes as it reads.
 */
function withoutViewOnlyValues(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutViewOnlyValues);
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key, item]) => item !== "" && item !== null && key !== "api_key_set" && key !== "auth_token_set")
      .map(([key, item]) => [key, withoutViewOnlyValues(item)]),
  );
}
const asInput = (config: unknown) => withoutViewOnlyValues(config) as ProjectConfig;

/** Shows a secret that the server will never show again, with a way to copy it. */
function ShownOnce({ label, secret }: { label: string; secret: string }) {
  return html`<div class="shown-once" role="status">
    <p><strong>${label}</strong>: shown once. Copy it now; only its hash is stored.</p>
    <code data-testid="shown-once">${secret}</code>
    <button type="button" onClick=${() => void navigator.clipboard?.writeText(secret)}>Copy</button>
  </div>`;
}

function AdminKeyForm({ onSet }: { onSet: () => void }) {
  return html`<form class="card" onSubmit=${(event: Event) => {
    event.preventDefault();
    const key = formValues(event.currentTarget as HTMLFormElement)["admin_key"];
    if (key) {
      session.setAdminKey(key);
      onSet();
    }
  }}>
    <${Field} label="Admin key" hint="The server's ADMIN_API_KEY; kept in this tab's session storage only.">
      <input name="admin_key" type="password" autocomplete="off" required />
    <//>
    <button type="submit">Use admin key</button>
  </form>`;
}

/** Runs an admin action: its failure shown, its success message announced next to where it was asked for. */
function useAction() {
  const [error, setError] = useState<unknown>();
  const [notice, setNotice] = useState<string>();
  const run = async (work: () => Promise<string | void>) => {
    setError(undefined);
    setNotice(undefined);
    try {
      const message = await work();
      if (message) setNotice(message);
    } catch (failure) {
      setError(failure);
    }
  };
  const feedback = html`<${ErrorNote} error=${error} />${notice ? html`<p role="status" class="notice">✓ ${notice}</p>` : null}`;
  return { run, feedback };
}

function ApiKeys({ organizationId, onSecret }: { organizationId: string; onSecret: (label: string, value: string) => void }) {
  const [keys, setKeys] = useState<ApiKey[]>();
  const { run, feedback } = useAction();
  const load = () => adminClient().admin.listApiKeys(organizationId, { limit: 100 }).then((page) => setKeys(page.api_keys));
  useEffect(() => void run(load), [organizationId]);
  return html`<section aria-labelledby="keys-title">
    <h3 id="keys-title">API keys</h3>
    ${feedback}
    <div class="table-wrap"><table>
      <caption class="visually-hidden">The organization's API keys, oldest first</caption>
      <thead><tr><th scope="col">Key</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">State</th><th scope="col">Actions</th></tr></thead>
      <tbody>${(keys ?? []).map((key) => html`<tr key=${key.id} data-key-id=${key.id}>
        <td><code title=${key.id}>${key.display}</code></td>
        <td>${formatDate(key.created_at)}</td>
        <td>${key.last_used_at ? html`<time datetime=${key.last_used_at} title=${formatDate(key.last_used_at)}>${sinceText(key.last_used_at)}</time>` : "Never"}</td>
        <td>${key.revoked_at ? html`<span class="status error" title=${key.revoked_at}>Revoked</span>` : html`<span class="status ended">Active</span>`}</td>
        <td>${key.revoked_at
          ? null
          : html`<div class="actions"><button type="button" onClick=${() => run(async () => {
              const rotated = await adminClient().admin.rotateApiKey(key.id);
              onSecret(`New key replacing ${key.display}`, rotated.api_key);
              await load();
              return `${key.display} rotated: the new key is shown once above, the old one no longer works.`;
            })} aria-label=${`Rotate ${key.display}`}>Rotate</button>
            <button type="button" class="danger" onClick=${() => run(async () => {
              if (!confirm(`Revoke ${key.display}? Requests with it fail at once.`)) return;
              await adminClient().admin.revokeApiKey(key.id);
              await load();
              return `${key.display} revoked.`;
            })} aria-label=${`Revoke ${key.display}`}>Revoke</button></div>`}</td>
      </tr>`)}</tbody>
    </table></div>
    <p><button type="button" onClick=${() => run(async () => {
      const created = await adminClient().admin.createApiKey(organizationId);
      onSecret("New API key", created.api_key);
      await load();
      return "API key created.";
    })}>Create API key</button></p>
  </section>`;
}

function Projects({ organizationId, openedId, openProject }: { organizationId: string; openedId: string | null; openProject: (id: string) => void }) {
  const [projects, setProjects] = useState<Project[]>();
  const { run, feedback } = useAction();
  const load = () => adminClient().admin.listProjects(organizationId, { limit: 100 }).then((page) => setProjects(page.projects));
  useEffect(() => void run(load), [organizationId]);
  return html`<section aria-labelledby="projects-title">
    <h3 id="projects-title">Projects</h3>
    ${feedback}
    ${projects && projects.length === 0 ? html`<p>No projects yet.</p>` : null}
    <ul class="pick-list">${(projects ?? []).map((project) => html`<li key=${project.id}>
      <button type="button" class="link" onClick=${() => openProject(project.id)} title=${project.id} aria-current=${project.id === openedId ? "true" : undefined}>${project.name}</button>
      <small class="hint">created ${formatDate(project.created_at)}</small>
    </li>`)}</ul>
    <details class="card new-project" open=${projects !== undefined && projects.length === 0}>
      <summary>New project</summary>
      <form class="sim-form" onSubmit=${(event: Event) => {
        event.preventDefault();
        const form = event.currentTarget as HTMLFormElement;
        const values = formValues(form);
        void run(async () => {
          const created = await adminClient().admin.createProject(organizationId, values["name"] ?? "", asInput(JSON.parse(values["config"] ?? "{}")));
          await load();
          openProject(created.id);
          return `Project ${created.name} created.`;
        });
      }}>
        <${Field} label="Project name"><input name="name" required maxlength="200" placeholder="e.g. support" /><//>
        <${Field} label="Configuration (JSON)"><textarea name="config" rows="3" class="code" defaultValue='{"agent": {"provider": "builtin"}}'></textarea><//>
        <div class="form-actions"><button type="submit">Create project</button></div>
      </form>
    </details>
  </section>`;
}

/** Two versions side by side: every setting that differs, with its value in each. */
function VersionDiff({ from, to }: { from: ConfigVersion; to: ConfigVersion }) {
  const changes = configChanges(from.config, to.config);
  return html`<div class="table-wrap diff" aria-live="polite">
    <table>
      <caption>Changes from version ${from.version} to version ${to.version}</caption>
      <thead><tr><th scope="col">Setting</th><th scope="col">Version ${from.version}</th><th scope="col">Version ${to.version}</th></tr></thead>
      <tbody>${changes.length === 0
        ? html`<tr><td colspan="3">The two versions are the same.</td></tr>`
        : changes.map((change) => html`<tr key=${change.path} class=${change.before === undefined ? "added" : change.after === undefined ? "removed" : "changed"}>
            <th scope="row"><code>${change.path}</code></th>
            <td class="before">${change.before === undefined ? html`<em>not set</em>` : html`<code>${change.before}</code>`}</td>
            <td class="after">${change.after === undefined ? html`<em>not set</em>` : html`<code>${change.after}</code>`}</td>
          </tr>`)}</tbody>
    </table>
  </div>`;
}

function ProjectPanel({ projectId }: { projectId: string }) {
  const [project, setProject] = useState<ProjectView>();
  const [diff, setDiff] = useState<{ from: ConfigVersion; to: ConfigVersion }>();
  const load = async () => setProject((await adminClient().admin.getProject(projectId)) as ProjectView);
  const page = useAction();
  const publishing = useAction();
  useEffect(() => void page.run(load), [projectId]);
  if (!project) return html`<section class="card">${page.feedback}<p>Loading the project…</p></section>`;
  const newest = project.versions.at(-1);
  const previous = project.versions.at(-2);
  return html`<section class="card project" aria-labelledby="project-title">
    <h3 id="project-title">Project ${project.name}</h3>
    <p class="hint">Id <code>${project.id}</code></p>
    ${page.feedback}
    <${TestCall} projectId=${project.id} projectName=${project.name} />
    <h4>Configuration versions</h4>
    <div class="table-wrap"><table>
      <caption class="visually-hidden">Configuration versions, oldest first</caption>
      <thead><tr><th scope="col">Version</th><th scope="col">Published</th><th scope="col">Actions</th></tr></thead>
      <tbody>${project.versions.map((version) => html`<tr key=${version.id} data-version=${version.version}>
        <td title=${version.id}>${version.version}${version.id === project.config_version_id ? html` <span class="status ended">current</span>` : null}</td>
        <td>${formatDate(version.created_at)}</td>
        <td>${version.id === project.config_version_id
          ? null
          : html`<button type="button" onClick=${() => page.run(async () => {
              const earlier = await adminClient().admin.getConfigVersion(project.id, version.id);
              await adminClient().admin.publishConfig(project.id, asInput(earlier.config));
              await load();
              return `Version ${version.version} published again as version ${project.versions.length + 1}, now the current one.`;
            })}>Publish again as new</button>`}</td>
      </tr>`)}</tbody>
    </table></div>
    ${project.versions.length < 2 ? html`<p class="hint">Publish a second version to compare two.</p>` : html`<form class="compare" aria-label="Compare versions" key=${project.versions.length} onSubmit=${(event: Event) => {
      event.preventDefault();
      const values = formValues(event.currentTarget as HTMLFormElement);
      void page.run(async () => {
        const [from, to] = await Promise.all([values["from"], values["to"]].map((id) => adminClient().admin.getConfigVersion(project.id, id ?? "")));
        setDiff({ from: from!, to: to! });
      });
    }}>
      <${Field} label="From version"><select name="from">${project.versions.map((version) => html`<option value=${version.id} selected=${version.id === (previous ?? newest)?.id}>${version.version}</option>`)}</select><//>
      <${Field} label="To version"><select name="to">${project.versions.map((version) => html`<option value=${version.id} selected=${version.id === newest?.id}>${version.version}</option>`)}</select><//>
      <button type="submit">Show changes</button>
    </form>`}
    ${diff ? html`<${VersionDiff} from=${diff.from} to=${diff.to} />` : null}
    <h4>Edit and publish</h4>
    <form onSubmit=${(event: Event) => {
      event.preventDefault();
      const text = formValues(event.currentTarget as HTMLFormElement)["config"];
      void publishing.run(async () => {
        const { config_version_id } = await adminClient().admin.publishConfig(project.id, asInput(JSON.parse(text ?? "{}")));
        await load();
        return `Published version ${project.versions.length + 1} (${config_version_id}); new conversations use it now.`;
      });
    }}>
      <${Field} label="Configuration (JSON; write-only secrets are not shown)">
        <textarea key=${project.config_version_id} name="config" rows="12" class="code" defaultValue=${JSON.stringify(project.config, null, 2)}></textarea>
      <//>
      <div class="form-actions"><button type="submit">Publish as a new version</button></div>
      ${publishing.feedback}
    </form>
  </section>`;
}

/** The operator's screens: organizations, then one's API keys and projects, then a project's versions; all picked from lists. */
export function AdminPage() {
  const [hasKey, setHasKey] = useState(session.adminKey() !== null);
  const [organizations, setOrganizations] = useState<Organization[]>([]);
  const [organizationCursor, setOrganizationCursor] = useState<string | null>(null);
  /** A key shown once, with the organization it belongs to: it is shown while that organization is the one picked. */
  const [secret, setSecret] = useState<{ label: string; value: string; organizationId: string }>();
  const [params, setParams] = useQuery();
  const organizationId = params.get("org");
  const projectId = params.get("project");
  const { run, feedback } = useAction();
  const loadOrganizations = async (cursor?: string) => {
    const page = await adminClient().admin.listOrganizations({ limit: 100, ...(cursor ? { cursor } : {}) });
    setOrganizations((shown) => (cursor ? [...shown, ...page.organizations] : page.organizations));
    setOrganizationCursor(page.pagination.cursor);
  };

  useEffect(() => {
    if (hasKey) void run(loadOrganizations);
  }, [hasKey]);

  if (!hasKey) return html`<section aria-labelledby="admin-title"><h1 id="admin-title">Admin</h1><${AdminKeyForm} onSet=${() => setHasKey(true)} /></section>`;
  // An organization named by the URL but not on the pages loaded so far is shown by its id.
  const organization = organizationId ? (organizations.find((candidate) => candidate.id === organizationId) ?? { id: organizationId, name: `Organization ${organizationId}` }) : undefined;

  return html`
    <section aria-labelledby="admin-title" class="admin">
      <h1 id="admin-title">Admin</h1>
      <p><button class="link" onClick=${() => {
        session.setAdminKey(null);
        setHasKey(false);
      }}>Forget the admin key</button></p>
      ${feedback}
      ${secret && secret.organizationId === organizationId ? html`<${ShownOnce} label=${secret.label} secret=${secret.value} />` : null}
      <div class="admin-grid">
        <section aria-labelledby="organizations-title">
          <h2 id="organizations-title">Organizations</h2>
          <ul class="pick-list">${organizations.map((listed) => html`<li key=${listed.id}>
            <a href=${`#/admin?org=${listed.id}`} aria-current=${listed.id === organizationId ? "page" : undefined} title=${listed.id}>${listed.name}</a>
          </li>`)}</ul>
          ${organizationCursor ? html`<p><button type="button" class="link" onClick=${() => run(() => loadOrganizations(organizationCursor))}>More organizations</button></p>` : null}
          <form class="card" onSubmit=${(event: Event) => {
            event.preventDefault();
            const form = event.currentTarget as HTMLFormElement;
            const name = formValues(form)["name"] ?? "";
            void run(async () => {
              const created = await adminClient().admin.createOrganization(name);
              setSecret({ label: `API key of ${created.name}`, value: created.api_key, organizationId: created.id });
              // The newest organization is on the list's last page: it is added to what is shown rather than paged to.
              setOrganizations((shown) => [...shown, { id: created.id, name: created.name, created_at: new Date().toISOString() }]);
              setParams({ org: created.id });
              form.reset();
              return `Organization ${created.name} created.`;
            });
          }}>
            <${Field} label="New organization name"><input name="name" required maxlength="200" placeholder="e.g. Acme" /><//>
            <div class="form-actions"><button type="submit">Create organization</button></div>
          </form>
        </section>
        <div>
          ${organization
            ? html`<h2>${organization.name}</h2>
                <${ApiKeys} key=${`keys-${organization.id}`} organizationId=${organization.id} onSecret=${(label: string, value: string) => setSecret({ label, value, organizationId: organization.id })} />
                <${Projects} key=${`projects-${organization.id}`} organizationId=${organization.id} openedId=${projectId} openProject=${(id: string) => setParams({ org: organization.id, project: id })} />
                ${projectId ? html`<${ProjectPanel} key=${projectId} projectId=${projectId} />` : null}`
            : html`<p class="hint">Choose an organization to see its API keys and projects.</p>`}
        </div>
      </div>
    </section>
  `;
}
