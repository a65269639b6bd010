import { ApiResponse } from '@nestjs/swagger';

/**
 * Documents a `@Redirect()` answer: 302 with the target in `Location` and no body
 * (`BrokerExpressAdapter` writes none: the URL can carry a state or a code).
 */
export function ApiRedirectResponse(description: string): MethodDecorator & ClassDecorator {
  return ApiResponse({
    status: 302,
    description,
    headers: {
      Location: {
        description: 'the absolute URL to send the user to',
        required: true,
        schema: { type: 'string', format: 'uri' },
      },
    },
  });
}
