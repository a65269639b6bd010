import { PageTitle } from '../components/PageTitle';

/** Placeholder until the page lands: its title only. */
export function PermissionSetsPage() {
  return <PageTitle title="Permission sets" lead="This page is not built yet." />;
}
