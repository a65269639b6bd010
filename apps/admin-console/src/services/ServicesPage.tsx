import { PageTitle } from '../components/PageTitle';

/** Placeholder until the page lands: its title only. */
export function ServicesPage() {
  return <PageTitle title="Services" lead="This page is not built yet." />;
}
