import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { RouterProvider } from 'react-router';
import { ApiFailure } from './api/client';
import { router } from './router';
import './styles/app.css';

const queries = new QueryClient({
  defaultOptions: {
    queries: {
      // A 4xx will not change by asking again; a network error may.
      retry: (count, error) => !(error instanceof ApiFailure) && count < 2,
      refetchOnWindowFocus: true,
      staleTime: 5_000,
    },
  },
});

createRoot(document.getElementById('root') as HTMLElement).render(
  <StrictMode>
    <QueryClientProvider client={queries}>
      <RouterProvider router={router} />
    </QueryClientProvider>
  </StrictMode>,
);
