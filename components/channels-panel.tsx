"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { channelsKey, channelsQuery, createChannel, deleteChannel, testChannel, updateChannel, type ChannelInput, type ChannelView } from "@/lib/client/alerts";
import { ChannelForm } from "./channels-form";
import { Badge } from "./ui/badge";
import { Button } from "./ui/button";
import { Section } from "./ui/field";
import { ErrorState, Loading } from "./ui/states";

type TestResult = { ok: boolean; error?: string } | "sending";

function target(c: ChannelView): string {
  const cfg = c.config as { url?: string; to?: string[] };
  return c.kind === "email" ? (cfg.to ?? []).join(", ") : (cfg.url ?? "");
}

/** Notification channels: add, enable/disable, send a test, delete. */
export function ChannelsPanel() {
  const qc = useQueryClient();
  const q = useQuery(channelsQuery());
  const [tests, setTests] = useState<Record<number, TestResult>>({});
  const [editing, setEditing] = useState<number | null>(null);
  const invalidate = () => qc.invalidateQueries({ queryKey: channelsKey });
  const create = useMutation({ mutationFn: createChannel, onSuccess: invalidate });
  const toggle = useMutation({
    mutationFn: (c: ChannelView) => updateChannel(c.id, { name: c.name, kind: c.kind, config: c.config, enabled: !c.enabled } as ChannelInput),
    onSuccess: invalidate,
  });
  const save = useMutation({
    mutationFn: ({ id, input }: { id: number; input: ChannelInput }) => updateChannel(id, input),
    onSuccess: () => {
      setEditing(null);
      return invalidate();
    },
  });
  const remove = useMutation({ mutationFn: deleteChannel, onSuccess: invalidate });
  const sendTest = async (id: number) => {
    setTests((t) => ({ ...t, [id]: "sending" }));
    try {
      const r = await testChannel(id);
      setTests((t) => ({ ...t, [id]: r }));
    } catch (err) {
      setTests((t) => ({ ...t, [id]: { ok: false, error: err instanceof Error ? err.message : String(err) } }));
    }
  };

  return (
    <Section title="Channels" testId="channels">
      {q.isPending ? (
        <Loading />
      ) : q.isError ? (
        <ErrorState error={q.error} retry={() => q.refetch()} />
      ) : (
        <div className="space-y-4">
          {q.data.channels.length === 0 ? (
            <p className="text-sm text-slate-600" data-testid="channels-empty">
              No channels yet: alerts are recorded below but sent nowhere. Add a webhook, a Slack-compatible webhook or an e-mail address.
            </p>
          ) : (
            <div className="relative overflow-x-auto">
            <table className="min-w-full text-sm" data-testid="channels-table">
              <thead className="text-left text-xs uppercase text-slate-500">
                <tr>
                  <th className="py-2 pr-4">Name</th>
                  <th className="py-2 pr-4">Kind</th>
                  <th className="py-2 pr-4">Sends to</th>
                  <th className="py-2 pr-4">State</th>
                  <th className="py-2" />
                </tr>
              </thead>
              <tbody>
                {q.data.channels.map((c) => {
                  const test = tests[c.id];
                  return [
                    <tr key={c.id} className="border-t border-slate-100 align-top" data-testid="channel-row">
                      <td className="py-2 pr-4 font-medium">{c.name}</td>
                      <td className="py-2 pr-4">{c.kind}</td>
                      <td className="max-w-xs truncate py-2 pr-4 font-mono text-xs" title={target(c)}>{target(c)}</td>
                      <td className="py-2 pr-4">
                        <Badge tone={c.enabled ? "green" : "slate"}>{c.enabled ? "enabled" : "disabled"}</Badge>
                      </td>
                      <td className="py-2">
                        <div className="flex flex-wrap justify-end gap-2">
                          <Button size="sm" onClick={() => sendTest(c.id)} disabled={test === "sending"} data-testid="channel-test">
                            {test === "sending" ? "Sending…" : "Send test"}
                          </Button>
                          <Button size="sm" onClick={() => setEditing(editing === c.id ? null : c.id)} data-testid="channel-edit">
                            Edit
                          </Button>
                          <Button size="sm" onClick={() => toggle.mutate(c)} disabled={toggle.isPending}>
                            {c.enabled ? "Disable" : "Enable"}
                          </Button>
                          <Button size="sm" variant="danger" onClick={() => confirm(`Delete channel "${c.name}"?`) && remove.mutate(c.id)}>
                            Delete
                          </Button>
                        </div>
                        {test && test !== "sending" ? (
                          <p role="status" data-testid="channel-test-result" className={`mt-1 text-right text-xs ${test.ok ? "text-emerald-700" : "text-red-700"}`}>
                            {test.ok ? "Test sent: the receiver accepted it." : `Test failed: ${test.error}`}
                          </p>
                        ) : null}
                      </td>
                    </tr>,
                    editing === c.id ? (
                      <tr key={`${c.id}-edit`}>
                        <td colSpan={5} className="rounded-md bg-slate-50 p-3">
                          <ChannelForm initial={c} smtpConfigured={q.data.smtpConfigured} onSubmit={(input) => save.mutateAsync({ id: c.id, input })} onCancel={() => setEditing(null)} />
                        </td>
                      </tr>
                    ) : null,
                  ];
                })}
              </tbody>
            </table>
            </div>
          )}
          <ChannelForm onSubmit={(input) => create.mutateAsync(input)} smtpConfigured={q.data.smtpConfigured} />
        </div>
      )}
    </Section>
  );
}
