// The page's single login session and API client.

import { Api } from './api';
import { AuthSession } from './auth';

/** This tab's login session (tokens live in sessionStorage). */
export const auth = new AuthSession(sessionStorage);

/** The API client. */
export const api = new Api(auth);
