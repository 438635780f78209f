// The organization's members: list them (organization.members), add one by e-mail
// (organization.createMember), and change a member's role (organization.updateMember).
import type { RouterOutputs } from '@switchyard/client';
import { useCallback, useId, useState } from 'react';
import { describeError, type ServerError, type Session } from './session.js';
import { DataTable, ErrorMessage, Form, Page, useLoad } from './ui.js';

type Member = RouterOutputs['organization']['members']['data'][number];
type Role = Member['role'];
const ROLES: { value: Role; label: string }[] = [
  { value: 'org:member', label: 'org:member' },
  { value: 'org:admin', label: 'org:admin' },
];

export function MembersPage({ session }: { session: Session }) {
  const load = useCallback(async () => (await session.client.organization.members.query({ limit: 100 })), [session]);
  const { data, error, reload } = useLoad(load);
  return (
    <Page title="Members">
      <Form
        title="Add a member"
        submitLabel="Add member"
        fields={[
          { name: 'email', label: 'E-mail', required: true },
          { name: 'first_name', label: 'First name' },
          { name: 'last_name', label: 'Last name' },
          { name: 'role', label: 'Role', type: 'select', options: ROLES },
        ]}
        submit={(v) =>
          session.client.organization.createMember.mutate({
            email: v.email ?? '',
            first_name: v.first_name || undefined,
            last_name: v.last_name || undefined,
            role: v.role as Role,
          })
        }
        onDone={() => void reload()}
      />
      {error ? <ErrorMessage error={error} /> : null}
      <DataTable
        testId="members"
        caption={data ? `The organization's members (${data.data.length} of ${data.total_count})` : ''}
        rows={data?.data ?? null}
        rowKey={(m) => m.id}
        columns={[
          { header: 'E-mail', cell: (m) => m.email, className: 'name' },
          { header: 'Name', cell: (m) => `${m.first_name} ${m.last_name}`.trim(), className: 'name' },
          { header: 'Role', cell: (m) => <RoleEditor key={m.role} session={session} member={m} onChanged={() => void reload()} /> },
        ]}
      />
    </Page>
  );
}

function RoleEditor({ session, member, onChanged }: { session: Session; member: Member; onChanged: () => void }) {
  const [role, setRole] = useState<Role>(member.role);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ServerError | null>(null);
  const id = useId();
  const save = async () => {
    setBusy(true);
    setError(null);
    try {
      await session.client.organization.updateMember.mutate({ user_id: member.id, role });
      onChanged();
    } catch (e) {
      setError(describeError(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <div className="inline">
      <label htmlFor={id} className="visually-hidden">
        Role of {member.email}
      </label>
      <select id={id} value={role} onChange={(e) => setRole(e.target.value as Role)} disabled={busy}>
        {ROLES.map((r) => (
          <option key={r.value} value={r.value}>
            {r.label}
          </option>
        ))}
      </select>
      <button type="button" onClick={() => void save()} disabled={busy || role === member.role} aria-label={`Save the role of ${member.email}`}>
        Save
      </button>
      {error ? <ErrorMessage error={error} /> : null}
    </div>
  );
}
