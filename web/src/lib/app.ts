// The page's single login session and API client.

import { Api } from './api';
import { AuthSession } from './auth';

/** This browser's login session: tokens live in localStorage, so a new tab or a shared link
 * is signed in; signing out clears them. */
export const auth = new AuthSession(localStorage);

/** The API client. */
export const api = new Api(auth);
