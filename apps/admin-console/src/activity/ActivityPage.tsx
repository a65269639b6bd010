import { PageTitle } from '../components/PageTitle';

/** Placeholder until the page lands: its title only. */
export function ActivityPage() {
  return <PageTitle title="Activity" lead="This page is not built yet." />;
}
