import { PageTitle } from '../components/PageTitle';

/** Placeholder until the page lands: its title only. */
export function ResourcePage() {
  return <PageTitle title="MCP server" lead="This page is not built yet." />;
}
