import { PageTitle } from '../components/PageTitle';

/** Placeholder until the page lands: its title only. */
export function SigningKeysPage() {
  return <PageTitle title="Signing keys" lead="This page is not built yet." />;
}
