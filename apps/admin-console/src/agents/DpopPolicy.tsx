import type { DpopChoice } from './agent-form';

const CHOICES: readonly { value: DpopChoice; label: string; words: string }[] = [
  {
    value: 'default',
    label: "The broker's default",
    words:
      'Whatever oauth2_authorization_server.local.dpop.required says in the broker’s configuration; it follows a change there.',
  },
  {
    value: 'required',
    label: 'Required',
    words:
      'Every token request of this agent must carry a DPoP proof, and its tokens are bound to its key: a stolen token is useless without that key.',
  },
  {
    value: 'optional',
    label: 'Optional',
    words: 'A proof binds the token when the agent sends one; without one it gets a plain bearer token.',
  },
];

/** The agent's DPoP policy (RFC 9449 §5.2, `dpop_bound_access_tokens`) as three choices, each in words. */
export function DpopPolicy(props: {
  readonly value: DpopChoice;
  readonly error?: string;
  readonly readOnly: boolean;
  readonly onChange: (value: DpopChoice) => void;
}) {
  const { value, error, readOnly, onChange } = props;
  return (
    <fieldset
      className={error !== undefined ? 'choices invalid' : 'choices'}
      aria-describedby={error !== undefined ? 'field-dpop-error' : undefined}
    >
      <legend>DPoP proof of possession</legend>
      {CHOICES.map((choice) => (
        <label key={choice.value} className="choice">
          <input
            type="radio"
            name="dpop_bound_access_tokens"
            value={choice.value}
            checked={value === choice.value}
            disabled={readOnly && value !== choice.value}
            aria-describedby={`dpop-${choice.value}-words`}
            onChange={() => onChange(choice.value)}
          />
          <span>
            {choice.label}
            <span className="choice-words" id={`dpop-${choice.value}-words`}>
              {choice.words}
            </span>
          </span>
        </label>
      ))}
      {error !== undefined ? (
        <p className="field-error" id="field-dpop-error">
          {error}
        </p>
      ) : null}
    </fieldset>
  );
}
