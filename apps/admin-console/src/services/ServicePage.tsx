import { PageTitle } from '../components/PageTitle';

/** Placeholder until the page lands: its title only. */
export function ServicePage() {
  return <PageTitle title="Service" lead="This page is not built yet." />;
}
