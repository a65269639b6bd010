import { PageTitle } from '../components/PageTitle';

/** Placeholder until the page lands: its title only. */
export function OverviewPage() {
  return <PageTitle title="Overview" lead="This page is not built yet." />;
}
