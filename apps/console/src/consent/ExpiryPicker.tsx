import { EXPIRY_OPTIONS, localDate, type Expiry } from './expiry';

/** How long the access lasts: 1, 30 or 90 days, no expiry, or until a date. */
export function ExpiryPicker({
  value,
  onChange,
  error,
  disabled,
  now,
}: {
  value: Expiry;
  onChange: (next: Expiry) => void;
  error: string | null;
  disabled: boolean;
  now: Date;
}) {
  return (
    <section className="panel consent-expiry" aria-labelledby="consent-expiry">
      <h2 id="consent-expiry">How long</h2>
      <fieldset className="consent-plain" aria-labelledby="consent-expiry" disabled={disabled}>
        <div className="consent-expiry-options">
          {EXPIRY_OPTIONS.map((option) => (
            <label key={option.value} className="consent-option">
              <input
                type="radio"
                name="consent-expiry"
                value={option.value}
                checked={value.choice === option.value}
                onChange={() => onChange({ ...value, choice: option.value })}
              />
              <span>{option.label}</span>
            </label>
          ))}
        </div>
        {value.choice === 'date' ? (
          <div className="consent-date">
            <label htmlFor="consent-expiry-date">Expiry date</label>
            <input
              id="consent-expiry-date"
              type="date"
              value={value.date}
              min={localDate(new Date(now.getTime() + 86_400_000))}
              aria-invalid={error !== null}
              aria-describedby={error !== null ? 'consent-expiry-error' : 'consent-expiry-hint'}
              onChange={(event) => onChange({ ...value, date: event.target.value })}
            />
            <span id="consent-expiry-hint" className="consent-muted">
              Access ends at the end of that day.
            </span>
          </div>
        ) : null}
        {error !== null ? (
          <p id="consent-expiry-error" className="consent-field-error" role="alert">
            {error}
          </p>
        ) : null}
      </fieldset>
      <p className="consent-muted consent-expiry-note">
        {value.choice === 'none'
          ? 'Access lasts until you revoke it on the Agents page.'
          : 'You can revoke access at any time on the Agents page.'}
      </p>
    </section>
  );
}
