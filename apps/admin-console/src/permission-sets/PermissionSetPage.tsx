import { PageTitle } from '../components/PageTitle';

/** Placeholder until the page lands: its title only. */
export function PermissionSetPage() {
  return <PageTitle title="Permission set" lead="This page is not built yet." />;
}
