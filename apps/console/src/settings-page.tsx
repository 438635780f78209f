// The organization's settings: its details (the session's organization, account.credits), how long
// its generation content is kept (settings.retention, settings.updateRetention) and its spend alerts'
// thresholds (settings.alerts, settings.updateAlerts). Each part loads on its own, so a key-made
// session lacking one part's scope still sees the others.
import { useCallback } from 'react';
import type { Session } from './session.js';
import { ErrorMessage, Form, listOf, numberOf, Page, usd, useLoad, when } from './ui.js';

export function SettingsPage({ session }: { session: Session }) {
  const credits = useLoad(useCallback(async () => (await session.client.account.credits.query()).data, [session]));
  const retention = useLoad(useCallback(async () => (await session.client.settings.retention.query()).data, [session]));
  const alerts = useLoad(useCallback(async () => (await session.client.settings.alerts.query()).data, [session]));

  return (
    <Page title="Settings">
      <h2>Organization</h2>
      <dl className="facts" data-testid="organization-details">
        <dt>Id</dt>
        <dd>
          <code>{session.organizationId}</code>
        </dd>
        <dt>Credit bought</dt>
        <dd>{credits.data ? usd(credits.data.total_credits) : '…'}</dd>
        <dt>Spent</dt>
        <dd>{credits.data ? usd(credits.data.total_usage) : '…'}</dd>
        <dt>Rate limits</dt>
        <dd>Set by the platform, which alone reads and changes them (docs/rate-limits.md).</dd>
      </dl>
      {credits.error ? <ErrorMessage error={credits.error} /> : null}

      <h2>Retention</h2>
      <p data-testid="retention">
        {retention.data
          ? retention.data.content_retention_days === null
            ? 'Generation content is kept for good.'
            : `Generation content is removed after ${retention.data.content_retention_days} days.`
          : '…'}{' '}
        {retention.data?.updated_at ? `Set ${when(retention.data.updated_at)}.` : ''}
      </p>
      {retention.error ? <ErrorMessage error={retention.error} /> : null}
      <Form
        title="Change the retention"
        submitLabel="Save retention"
        fields={[{ name: 'content_retention_days', label: 'Days to keep content (empty: for good)', type: 'number', min: '1', step: '1' }]}
        submit={(v) => session.client.settings.updateRetention.mutate({ content_retention_days: numberOf(v.content_retention_days ?? '') })}
        onDone={() => void retention.reload()}
      />

      <h2>Alerts</h2>
      <p data-testid="alerts">
        {alerts.data
          ? `Limit alerts at ${alerts.data.alert_thresholds.length > 0 ? alerts.data.alert_thresholds.map((t) => `${t}%`).join(', ') : 'no threshold'}; ${
              alerts.data.credits_low_usd === null ? 'no low-credit alert' : `low-credit alert under ${usd(alerts.data.credits_low_usd)}`
            }.`
          : '…'}
      </p>
      {alerts.error ? <ErrorMessage error={alerts.error} /> : null}
      <Form
        title="Change the alerts"
        submitLabel="Save alerts"
        fields={[
          { name: 'alert_thresholds', label: 'Thresholds (percent)', hint: 'Comma-separated, e.g. 50, 80, 100; empty leaves them' },
          { name: 'credits_low_usd', label: 'Low-credit alert under (USD)', type: 'number', step: '0.01', min: '0', hint: 'Empty leaves it' },
        ]}
        submit={(v) => {
          const thresholds = listOf(v.alert_thresholds ?? '');
          const low = numberOf(v.credits_low_usd ?? '');
          return session.client.settings.updateAlerts.mutate({
            ...(thresholds ? { alert_thresholds: thresholds.map(Number) } : {}),
            ...(low === null ? {} : { credits_low_usd: low }),
          });
        }}
        onDone={() => void alerts.reload()}
      />
    </Page>
  );
}
