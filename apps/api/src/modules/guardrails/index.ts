import { guardrailsRouter } from './guardrails.router.js';
import { defineModule } from '../manifest.js';

export const guardrailsModule = defineModule({
  name: 'guardrails',
  routers: { guardrails: guardrailsRouter },
});
