import { ApiFailure } from '../api/client';

/** What a failure means for the person, in words (issue 15: one error view for 401, 403, 404, network). */
function explain(error: unknown): { title: string; detail: string } {
  if (error instanceof ApiFailure) {
    if (error.status === 401) return { title: 'Your sign-in expired', detail: 'Reload the page to sign in again.' };
    if (error.status === 403) return { title: 'Not allowed', detail: error.message };
    if (error.status === 404) return { title: 'Not found', detail: error.message };
    if (error.status === 400 && error.code === 'session_expired') return { title: 'This request has expired', detail: 'Go back to the application that sent you here and start again.' };
    return { title: 'Something went wrong', detail: error.message };
  }
  return { title: 'The broker cannot be reached', detail: 'Check your connection and try again.' };
}

export function ErrorView({ error }: { error: unknown }) {
  const { title, detail } = explain(error);
  return (
    <section className="panel error-view" role="alert">
      <h2>{title}</h2>
      <p>{detail}</p>
    </section>
  );
}

export function NotFound() {
  return (
    <section className="panel error-view" role="alert">
      <h2>Page not found</h2>
      <p>There is no page at this address.</p>
    </section>
  );
}

export function Loading({ label }: { label: string }) {
  return (
    <p className="loading" role="status">
      {label}
    </p>
  );
}
