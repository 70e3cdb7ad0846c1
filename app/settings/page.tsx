import { PeopleView } from "@/components/people-view";
import { TokensView } from "@/components/tokens-view";

export const metadata = { title: "Settings · Slotkeeper" };

export default function SettingsPage() {
  return (
    <>
      <TokensView />
      <PeopleView />
    </>
  );
}
