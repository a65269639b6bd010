import { Link } from 'react-router';
import { ApiFailure } from '../api/client';
import { PageTitle } from '../components/PageTitle';

/** A registry page whose entry could not be read: "not found" for a 404 (deleted meanwhile), else the failure. */
export function NotFoundHere(props: {
  readonly error: Error;
  /** "service", "MCP server", "permission set". */
  readonly what: string;
  readonly list: string;
  readonly listName: string;
}) {
  const { error, what, list, listName } = props;
  const title = `${what.charAt(0).toUpperCase()}${what.slice(1)} not found`;
  if (error instanceof ApiFailure && (error.status === 404 || error.status === 400))
    return (
      <>
        <PageTitle title={title} />
        <p>
          No {what} has this ID: it may have been deleted. <Link to={list}>{listName}</Link>
        </p>
      </>
    );
  return (
    <div className="notice danger" role="alert">
      The {what} could not be loaded: {error.message}
    </div>
  );
}
