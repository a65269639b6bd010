import { PageTitle } from '../components/PageTitle';

/** Placeholder until the page lands: its title only. */
export function ResourcesPage() {
  return <PageTitle title="MCP servers" lead="This page is not built yet." />;
}
