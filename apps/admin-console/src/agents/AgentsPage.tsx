import { PageTitle } from '../components/PageTitle';

/** Placeholder until the page lands: its title only. */
export function AgentsPage() {
  return <PageTitle title="Agents" lead="This page is not built yet." />;
}
