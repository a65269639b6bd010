import { PageTitle } from '../components/PageTitle';

/** Placeholder until the page lands: its title only. */
export function AgentPage() {
  return <PageTitle title="Agent" lead="This page is not built yet." />;
}
