import { AuditView } from "@/components/audit-view";

export const metadata = { title: "Audit · Slotkeeper" };

export default function AuditPage() {
  return <AuditView />;
}
