// Starts Swagger UI on /docs. Kept in a file (not inline) so the page runs under `script-src 'self'`.
window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({
    url: '/openapi.json',
    dom_id: '#swagger-ui',
    deepLinking: true,
    displayOperationId: true,
    persistAuthorization: false,
    // No call to the public validator service: the page must work offline.
    validatorUrl: null,
  });
});
